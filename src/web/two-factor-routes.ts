// Second factors over HTTP, for web sessions (an API token is made in a full session and carries
// no second factor of its own): POST /api/session/second-factor finishes a half-way sign-in;
// /api/me/2fa enrols, confirms and turns off a person's authenticator; PUT
// /api/account/two-factor-requirement is the owner's rule. Outside the bearer scope: a session that
// must enrol reaches these routes and nothing else.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { errorResponses } from '../api/schemas.ts';
import { CSRF_HEADER, type SessionStage, type WebSessions } from './sessions.ts';
import type { FactorInput, Person, TwoFactor } from '../accounts/two-factor.ts';
import { FactorBody } from '../api/factor-schemas.ts';

const Code = Type.String({ minLength: 1, maxLength: 16, description: 'The 6-digit code your authenticator shows now.' });
// A request without a body is not validated against the schema: each handler asks for one itself.
type FactorBody = Static<typeof FactorBody> | undefined;
const ConfirmBody = Type.Object({ code: Code }, { additionalProperties: false });
type ConfirmBody = Static<typeof ConfirmBody> | undefined;
const RuleBody = Type.Object({ required: Type.Boolean() }, { additionalProperties: false });
type RuleBody = Static<typeof RuleBody> | undefined;

const SignedIn = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), plan: Type.String() }),
  csrfToken: Type.String({ description: `Send it back in the ${CSRF_HEADER} header on every POST, PUT, PATCH and DELETE.` }),
});
const Status = Type.Object({
  password: Type.Boolean({ description: 'You have a password. Without one (an OpenID provider or a passkey signs you in) you confirm an account deletion with a factor.' }),
  totp: Type.Boolean({ description: 'An authenticator is enrolled and confirmed.' }),
  recoveryCodesLeft: Type.Integer(),
  passkeys: Type.Integer({ description: 'How many passkeys you have enrolled (GET /api/me/passkeys lists them).' }),
  passkeysAvailable: Type.Boolean({ description: "False where PUBLIC_URL's host is an IP address: browsers refuse passkeys there." }),
  requiredByAccount: Type.Boolean({ description: "The account's owner requires two factors of every member." }),
  owner: Type.Boolean({ description: 'You own the account: you may set the rule (PUT /api/account/two-factor-requirement).' }),
  csrfToken: Type.String({ description: 'The session\'s, also for a session that must enrol (GET /api/session answers it 403).' }),
});
const errors = { ...errorResponses, 403: errorResponses[401], 429: errorResponses[401] };
const tags = ['two factors'];

export function twoFactorRoutes(app: FastifyInstance, opts: { sessions: WebSessions; twoFactor: TwoFactor }) {
  const { sessions, twoFactor } = opts;

  /** The request's person, from a session at one of `stages` (CSRF checked on changes). */
  const personOf = async (request: FastifyRequest, stages: SessionStage[]) => {
    const session = await sessions.anyStageOf(request);
    if (!session) throw new AppError('unauthorized', 'not signed in');
    if (!stages.includes(session.stage)) {
      if (session.stage === 'second_factor') throw new AppError('second_factor_required', 'finish signing in with your second factor first');
      throw new AppError('two_factor_enrolment_required', 'your account requires two factors: enrol an authenticator first');
    }
    const person: Person = { id: session.id, email: session.email, accountId: session.accountId };
    return { person, session };
  };
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  app.post<{ Body: FactorBody }>(
    '/api/session/second-factor',
    {
      schema: {
        operationId: 'signInSecondFactor',
        summary: 'Finish a sign-in with a code from your authenticator, a recovery code or a passkey',
        description:
          'After POST /api/session answered `stage: second_factor`. A code is accepted once; wrong codes (and refused passkeys) are ' +
          'limited per person (429 after 5 in 15 minutes) and audited. A passkey answers a challenge from POST ' +
          '/api/me/2fa/passkey-options asked with this half-way session. Sets a new session cookie and answers a new CSRF token.',
        tags,
        security: [],
        body: FactorBody,
        response: { 200: SignedIn, ...errors },
      },
    },
    async (request, reply) => {
      const { sessionId, csrfToken, user } = await sessions.completeSecondFactor(request, (request.body ?? {}) as FactorInput);
      sessions.setCookie(reply, sessionId);
      noStore(reply);
      return { user, csrfToken };
    },
  );

  app.get(
    '/api/me/2fa',
    { schema: { operationId: 'getTwoFactor', summary: 'Your second factors', tags, security: [], response: { 200: Status, ...errors } } },
    async (request, reply) => {
      const { person, session } = await personOf(request, ['full', 'enrol']);
      noStore(reply);
      return { ...(await twoFactor.status(person)), owner: session.role === 'owner', csrfToken: session.csrfToken };
    },
  );

  app.post(
    '/api/me/2fa/totp',
    {
      schema: {
        operationId: 'beginTotp',
        summary: 'Start enrolling an authenticator (TOTP)',
        description: 'Answers a new secret, its otpauth:// URI and a QR code of it (SVG); it takes effect once POST /api/me/2fa/totp/confirm gets a first code. 409 while one is enrolled.',
        tags,
        security: [],
        response: {
          200: Type.Object({ secret: Type.String({ description: 'Base32, for typing in.' }), otpauthUri: Type.String(), qrCodeSvg: Type.String() }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { person } = await personOf(request, ['full', 'enrol']);
      noStore(reply);
      return twoFactor.beginTotp(person);
    },
  );

  app.post<{ Body: ConfirmBody }>(
    '/api/me/2fa/totp/confirm',
    {
      schema: {
        operationId: 'confirmTotp',
        summary: 'Confirm the authenticator with a first code; answers ten recovery codes, shown this once',
        description: 'A session that had to enrol becomes a full one: a new session cookie is set, and the new CSRF token is in the answer.',
        tags,
        security: [],
        body: ConfirmBody,
        response: {
          200: Type.Object({ recoveryCodes: Type.Array(Type.String()), csrfToken: Type.Optional(Type.String()) }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { person, session } = await personOf(request, ['full', 'enrol']);
      if (!request.body) throw new AppError('invalid_request', 'send {"code": "<the 6-digit code>"} to confirm the authenticator', { field: 'code' });
      const { recoveryCodes } = await twoFactor.confirmTotp(person, request.body.code, request.ip);
      noStore(reply);
      if (session.stage !== 'enrol') return { recoveryCodes };
      const { sessionId, csrfToken } = await sessions.advance(request, 'full');
      sessions.setCookie(reply, sessionId);
      return { recoveryCodes, csrfToken };
    },
  );

  app.delete<{ Body: FactorBody }>(
    '/api/me/2fa/totp',
    {
      schema: {
        operationId: 'disableTotp',
        summary: 'Turn your authenticator off, with a current factor',
        description: 'A current code, a recovery code or a passkey. Its recovery codes go with it. 409 `invalid_state` while the account requires two factors and you have no passkey.',
        tags,
        security: [],
        body: FactorBody,
        response: { 204: { type: 'null', description: 'Turned off.' }, ...errors },
      },
    },
    async (request, reply) => {
      const { person } = await personOf(request, ['full']);
      if (!request.body) throw new AppError('invalid_request', 'send a current code or a recovery code to turn the authenticator off');
      await twoFactor.disable(person, request.body as FactorInput, { sourceIp: request.ip, browserKey: sessions.browserKeyOf(request) });
      return reply.status(204).send();
    },
  );

  app.post(
    '/api/me/2fa/passkey-options',
    {
      schema: {
        operationId: 'passkeyFactorOptions',
        summary: 'A challenge for one of your passkeys: the second step of a sign-in, or to confirm a change',
        description:
          'Options for navigator.credentials.get() naming your passkeys. The answer goes in `passkey` of POST ' +
          '/api/session/second-factor (from a half-way session), DELETE /api/me/2fa/totp or DELETE /api/me/passkeys/{id}. The ' +
          "challenge is this session's, used once, and expires after 5 minutes. 409 `passkeys_need_host_name` where PUBLIC_URL's host is an IP address.",
        tags,
        security: [],
        response: { 200: Type.Object({ challenge: Type.String() }, { additionalProperties: true }), ...errors },
      },
    },
    async (request, reply) => {
      const { person } = await personOf(request, ['full', 'second_factor']);
      noStore(reply);
      return twoFactor.requirePasskeys().assertionOptions(person.id, sessions.browserKeyOf(request)!);
    },
  );

  app.put<{ Body: RuleBody }>(
    '/api/account/two-factor-requirement',
    {
      schema: {
        operationId: 'requireTwoFactors',
        summary: "The owner's rule: every member signs in with two factors",
        description:
          'Owner only, from a web session, after enrolling an authenticator themselves (409 otherwise). Members without a factor ' +
          'are made to enrol at their next sign-in: until they do, their session reaches only /api/me/2fa.',
        tags,
        security: [],
        body: RuleBody,
        response: { 200: Type.Object({ required: Type.Boolean() }), ...errors },
      },
    },
    async (request) => {
      const { person, session } = await personOf(request, ['full']);
      if (session.role !== 'owner') throw new AppError('forbidden_role', "only the account's owner can change this rule");
      if (!request.body) throw new AppError('invalid_request', 'send {"required": true} or {"required": false}', { field: 'required' });
      return twoFactor.setAccountRule(person, request.body.required, request.ip);
    },
  );
}
