// The request bodies that carry a factor, shared by the routes that ask for one: the second step
// of a sign-in, and the changes that need a current factor (turning an authenticator off, removing
// a passkey, deleting the account without a password).
import { Type } from '@sinclair/typebox';

/** Binary WebAuthn fields, as their JSON forms carry them. */
export const Base64Url = Type.String({ maxLength: 16_384, pattern: '^[A-Za-z0-9_-]*={0,2}$' });
const B64 = Base64Url;

export const PasskeyAssertion = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1024 }),
    rawId: Type.String({ minLength: 1, maxLength: 1024 }),
    type: Type.Literal('public-key'),
    response: Type.Object({ clientDataJSON: B64, authenticatorData: B64, signature: B64, userHandle: Type.Optional(B64) }),
    clientExtensionResults: Type.Optional(Type.Object({})),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { description: "A passkey's answer as JSON (the credential's toJSON() from navigator.credentials.get())." },
);

const Code = Type.String({ minLength: 1, maxLength: 16, description: 'The 6-digit code your authenticator shows now.' });
const RecoveryCode = Type.String({ minLength: 1, maxLength: 32, description: 'One of your recovery codes (spent once used).' });

export const FactorBody = Type.Object(
  { code: Type.Optional(Code), recoveryCode: Type.Optional(RecoveryCode), passkey: Type.Optional(PasskeyAssertion) },
  {
    additionalProperties: false,
    description: 'One of `code`, `recoveryCode`, or `passkey`: the answer to a challenge from POST /api/me/2fa/passkey-options for this session.',
  },
);
