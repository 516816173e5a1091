// OpenID Connect providers the operator configures for sign-in (oidc/), read by config.ts with the
// rest of the environment: a JSON list in OIDC_PROVIDERS, or one provider in OIDC_ISSUER and friends.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { boolean, format, text, url } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface OidcProvider {
  /** In the sign-in URL (/auth/oidc/<id>) and the account's list of identities. */
  id: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The sign-in button's text. */
  label: string;
  /**
   * The provider's email claim, when email_verified is true, proves the person reads that address:
   * only then may a first sign-in join the person who already has that email. Off by default
   * (Microsoft Entra ID's email claim is mutable and unverified: leave it off there).
   */
  verifiedEmails: boolean;
}

const ProviderSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z][a-z0-9-]{0,31}$' }),
    issuer: Type.String({ pattern: '^https?://' }),
    clientId: Type.String({ minLength: 1 }),
    clientSecret: Type.String({ minLength: 1 }),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    verifiedEmails: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const ProvidersSchema = Type.Array(ProviderSchema);

const providerList = () =>
  format<OidcProvider[]>(
    ProvidersSchema,
    'be a JSON list of {"id", "issuer", "clientId", "clientSecret", "label"?, "verifiedEmails"?} with distinct ids',
    (t) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch {
        return undefined;
      }
      if (!Value.Check(ProvidersSchema, parsed)) return undefined;
      if (new Set(parsed.map((p) => p.id)).size !== parsed.length) return undefined;
      return parsed.map((p) => ({ ...p, issuer: p.issuer.replace(/\/+$/, ''), label: p.label ?? `Sign in with ${p.id}`, verifiedEmails: p.verifiedEmails ?? false }));
    },
  );

export const OIDC_VARIABLES = {
  providers: variable('OIDC_PROVIDERS', providerList(), {
    secret: true,
    unset: 'none (unless `OIDC_ISSUER` is set)',
    doc: 'OpenID Connect providers for sign-in, a JSON list: `[{"id": "google", "issuer": "https://accounts.google.com", "clientId": "…", "clientSecret": "…", "label": "Sign in with Google", "verifiedEmails": true}]`; each redirects back to `PUBLIC_URL/auth/oidc/callback` (docs/ACCOUNTS.md)',
  }),
  issuer: variable('OIDC_ISSUER', url(['https:', 'http:']), {
    unset: 'none',
    doc: 'one OpenID Connect provider (instead of `OIDC_PROVIDERS`): its issuer URL; needs `OIDC_CLIENT_ID` and `OIDC_CLIENT_SECRET`',
  }),
  clientId: variable('OIDC_CLIENT_ID', text(), { unset: 'none', doc: 'the client id registered at `OIDC_ISSUER`' }),
  clientSecret: variable('OIDC_CLIENT_SECRET', text(), { secret: true, unset: 'none', doc: 'the client secret registered at `OIDC_ISSUER`' }),
  label: variable('OIDC_BUTTON_LABEL', text(), { default: 'Sign in with single sign-on', doc: 'the sign-in button of `OIDC_ISSUER`' }),
  verifiedEmails: variable('OIDC_VERIFIED_EMAILS', boolean(), {
    default: 'false',
    doc: '`true`: `OIDC_ISSUER` asserts verified emails, so a first sign-in whose ID token has `email_verified: true` joins the person with that email; keep `false` for Microsoft Entra ID',
  }),
};

export function readOidcConfig(env: Env, problems: string[]): OidcProvider[] {
  const v = readEnv(OIDC_VARIABLES, env, problems);
  const providers = [...(v.providers ?? [])];
  if (v.issuer !== undefined || v.clientId !== undefined || v.clientSecret !== undefined) {
    if (v.issuer === undefined || v.clientId === undefined || v.clientSecret === undefined) {
      problems.push('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together');
    } else if (providers.some((p) => p.id === 'sso')) {
      problems.push('OIDC_PROVIDERS names a provider "sso", the id OIDC_ISSUER takes');
    } else {
      providers.push({ id: 'sso', issuer: v.issuer, clientId: v.clientId, clientSecret: v.clientSecret, label: v.label, verifiedEmails: v.verifiedEmails });
    }
  }
  return providers;
}
