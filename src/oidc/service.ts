// OpenID Connect sign-in with the operator's providers (openid-client): authorization code with
// PKCE, a state and a nonce kept server-side for a few minutes and used once. A person is found by
// the ID token's issuer and subject; an email joins an existing person only where the operator says
// the provider verifies emails and the token says this one is verified.
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import type { Database } from '../db/database.ts';
import { findUserByEmail, findUserById, insertOwnAccount, insertUser, type MemberRow } from '../db/users.ts';
import { findSignupUserById, markAwaitingApproval } from '../db/signups.ts';
import { deleteOidcIdentities, findOidcIdentity, insertOidcIdentity, insertOidcLogin, listOidcIdentities, takeOidcLogin } from '../db/oidc.ts';
import { findPlan } from '../db/plans.ts';
import { AppError } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import { normalEmail } from '../domain/email.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import type { Logger } from '../logger.ts';
import type { SignupConfig } from '../signup/settings.ts';
import type { OidcProvider } from './settings.ts';

export const OIDC_CALLBACK_PATH = '/auth/oidc/callback';
// Long enough to type a password and a code at the provider; short enough that a leaked state is useless.
const LOGIN_TTL_S = 10 * 60;

export interface OidcDeps {
  db: Database;
  providers: OidcProvider[];
  publicUrl: string;
  signup: Pick<SignupConfig, 'mode' | 'plan'>;
  audit?: Pick<AuditLog, 'record'>;
  log?: Logger;
}

/** What a callback came to: a person to open a session for, or a person who must wait for approval. */
export type OidcOutcome =
  | { kind: 'signed_in'; user: MemberRow; provider: string; amr?: string[]; acr?: string }
  | { kind: 'linked'; userId: string; provider: string }
  | { kind: 'awaiting_approval' };

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');

function isLoopback(issuer: string) {
  const host = new URL(issuer).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

export class OidcSignIn {
  private readonly configs = new Map<string, Promise<client.Configuration>>();

  constructor(private readonly deps: OidcDeps) {}

  /** The buttons of the sign-in page. */
  get providers() {
    return this.deps.providers.map((p) => ({ id: p.id, label: p.label }));
  }

  private provider(id: string) {
    const p = this.deps.providers.find((x) => x.id === id);
    if (!p) throw new AppError('not_found', `no sign-in provider is called "${id}"`);
    return p;
  }

  // Discovery once per provider; a failed one is forgotten so the next sign-in tries again.
  private configuration(p: OidcProvider) {
    let config = this.configs.get(p.id);
    if (!config) {
      // Plain http only to a provider on this machine (a test's, a laptop's); anywhere else https.
      const execute = p.issuer.startsWith('http:') && isLoopback(p.issuer) ? [client.allowInsecureRequests] : [];
      config = client.discovery(new URL(p.issuer), p.clientId, p.clientSecret, undefined, { execute });
      config.catch((err) => {
        this.configs.delete(p.id);
        this.deps.log?.warn({ provider: p.id, err: (err as Error).message }, 'OpenID provider discovery failed');
      });
      this.configs.set(p.id, config);
    }
    return config.catch(() => {
      throw new AppError('service_unavailable', `the sign-in provider "${p.id}" cannot be reached right now; try again later`);
    });
  }

  /** Where to send the browser to sign in with `providerId` (or to link it to `linkUserId`). */
  async start(providerId: string, linkUserId: string | null): Promise<string> {
    const p = this.provider(providerId);
    const config = await this.configuration(p);
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    await insertOidcLogin(this.deps.db, { stateHash: hashState(state), provider: p.id, nonce, codeVerifier, linkUserId, ttlSeconds: LOGIN_TTL_S });
    return client
      .buildAuthorizationUrl(config, {
        redirect_uri: this.deps.publicUrl + OIDC_CALLBACK_PATH,
        scope: 'openid email',
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      })
      .toString();
  }

  /** The provider's redirect back: `query` is the callback's query string. */
  async callback(query: string, clientAddress: string): Promise<OidcOutcome> {
    const params = new URLSearchParams(query);
    const state = params.get('state');
    if (!state) throw new AppError('invalid_request', 'the sign-in answer carries no state; start again from the sign-in page');
    // Taken (deleted) before anything else: a replayed state finds nothing, whatever happens next.
    const login = await takeOidcLogin(this.deps.db, hashState(state));
    if (!login) throw new AppError('invalid_request', 'this sign-in was already used or has expired; start again from the sign-in page');
    const p = this.provider(login.provider);
    const config = await this.configuration(p);
    let claims: client.IDToken;
    try {
      const tokens = await client.authorizationCodeGrant(config, new URL(`${this.deps.publicUrl}${OIDC_CALLBACK_PATH}?${params}`), {
        pkceCodeVerifier: login.code_verifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims()!;
    } catch (err) {
      this.deps.log?.info({ provider: p.id, err: (err as Error).message }, 'OpenID sign-in refused');
      throw new AppError('unauthorized', `the answer of the sign-in provider "${p.id}" was refused (${(err as Error).message}); start again from the sign-in page`);
    }
    const issuer = claims.iss;
    const subject = claims.sub;
    const email = typeof claims.email === 'string' ? normalEmail(claims.email) : null;
    const factors = { provider: p.id, ...(Array.isArray(claims.amr) && { amr: claims.amr as string[] }), ...(typeof claims.acr === 'string' && { acr: claims.acr }) };
    const known = await findOidcIdentity(this.deps.db, issuer, subject);

    if (login.link_user_id) {
      if (known && known.user_id !== login.link_user_id) {
        throw new AppError('forbidden', `this ${p.label} identity already belongs to another person; sign in with it to use that account`);
      }
      if (!known) await insertOidcIdentity(this.deps.db, { issuer, subject, userId: login.link_user_id, provider: p.id, email });
      await this.auditLink(login.link_user_id, p.id, clientAddress, 'linked', { how: 'signed in' });
      return { kind: 'linked', userId: login.link_user_id, provider: p.id };
    }

    if (known) return this.signedIn(known.user_id, factors, clientAddress);

    // A first sign-in with this identity. An email joins an existing person only when the operator
    // trusts the provider's verification AND this token says the address is verified.
    const holder = email ? await findUserByEmail(this.deps.db, email) : undefined;
    if (holder) {
      if (p.verifiedEmails && claims.email_verified === true) {
        await insertOidcIdentity(this.deps.db, { issuer, subject, userId: holder.id, provider: p.id, email });
        await this.auditLink(holder.id, p.id, clientAddress, 'linked', { how: 'verified email' });
        return this.signedIn(holder.id, factors, clientAddress);
      }
      throw new AppError(
        'user_exists',
        `someone already has the email ${email} here, and ${p.label} is not trusted to prove it: sign in as that person, then link ${p.label} from the Account page`,
      );
    }
    return this.signUp(p, issuer, subject, email, claims.email_verified === true, clientAddress, factors);
  }

  private async signUp(p: OidcProvider, issuer: string, subject: string, email: string | null, emailVerified: boolean, clientAddress: string, factors: Omit<Extract<OidcOutcome, { kind: 'signed_in' }>, 'kind' | 'user'>): Promise<OidcOutcome> {
    const { mode, plan } = this.deps.signup;
    if (mode !== 'open' && mode !== 'approval') {
      throw new AppError('signup_closed', `no one here has this ${p.label} identity, and this service does not take sign-ups: ask an account owner to invite you`);
    }
    if (!email) throw new AppError('invalid_request', `${p.label} did not tell us your email address; allow it the "email" scope and try again`);
    if (!(await findPlan(this.deps.db, plan))) throw new AppError('service_unavailable', 'sign-up is not available right now');
    const userId = await this.deps.db.transaction(async (tx) => {
      // The address counts as verified only on the same terms as linking by email.
      const created = await insertUser(tx, { id: newId(), email, passwordHash: null, verified: p.verifiedEmails && emailVerified });
      if (!created) throw new AppError('user_exists', `someone already has the email ${email} here`);
      await insertOwnAccount(tx, created.id, plan);
      if (mode === 'approval') await markAwaitingApproval(tx, created.id);
      if (!(await insertOidcIdentity(tx, { issuer, subject, userId: created.id, provider: p.id, email }))) {
        throw new AppError('user_exists', 'this identity was just signed up; sign in again');
      }
      return created.id;
    });
    await this.deps.audit?.record({
      userId,
      actor: 'session',
      actorUserId: userId,
      actorEmail: email,
      sourceIp: clientAddress,
      action: 'user.signed_up',
      target: email,
      outcome: 'succeeded',
      details: { mode, plan, provider: p.id },
    });
    return mode === 'approval' ? { kind: 'awaiting_approval' } : this.signedIn(userId, factors, clientAddress);
  }

  private async signedIn(userId: string, factors: Omit<Extract<OidcOutcome, { kind: 'signed_in' }>, 'kind' | 'user'>, clientAddress: string): Promise<OidcOutcome> {
    const signup = await findSignupUserById(this.deps.db, userId);
    if (signup?.awaiting_approval_since) return { kind: 'awaiting_approval' };
    const user = await findUserById(this.deps.db, userId);
    // In the account's trail beside password sign-ins, saying which provider and what it asserted.
    await this.deps.audit?.record({
      userId: user!.account_id,
      actor: 'session',
      actorUserId: userId,
      actorEmail: user!.email,
      sourceIp: clientAddress,
      action: 'session.sign_in',
      target: user!.email,
      outcome: 'succeeded',
      details: { ...factors },
    });
    return { kind: 'signed_in', user: user!, ...factors };
  }

  /** The person's linked providers (the Account page). */
  async list(userId: string) {
    return (await listOidcIdentities(this.deps.db, userId)).map((i) => ({
      provider: i.provider,
      label: this.deps.providers.find((p) => p.id === i.provider)?.label ?? i.provider,
      email: i.email,
      linkedAt: i.created_at.toISOString(),
    }));
  }

  /** Unlinks a provider, unless it is the person's last way in. */
  async unlink(userId: string, providerId: string, clientAddress: string) {
    await this.deps.db.transaction(async (tx) => {
      const user = await findUserById(tx, userId);
      const identities = await listOidcIdentities(tx, userId);
      const others = identities.filter((i) => i.provider !== providerId).length;
      if (others === identities.length) throw new AppError('not_found', `no ${providerId} identity is linked to you`);
      if (!user?.password_hash && others === 0) {
        throw new AppError('invalid_state', 'this is your only way to sign in: set a password (reset it from the sign-in page) or link another provider first');
      }
      await deleteOidcIdentities(tx, userId, providerId);
    });
    await this.auditLink(userId, providerId, clientAddress, 'unlinked');
  }

  private async auditLink(userId: string, provider: string, clientAddress: string, what: 'linked' | 'unlinked', details: Record<string, unknown> = {}) {
    const user = await findSignupUserById(this.deps.db, userId);
    if (!user) return;
    await this.deps.audit?.record({
      userId: user.account_id,
      actor: 'session',
      actorUserId: userId,
      actorEmail: user.email,
      sourceIp: clientAddress,
      action: what === 'linked' ? 'user.oidc_linked' : 'user.oidc_unlinked',
      target: provider,
      outcome: 'succeeded',
      details: { provider, ...details },
    });
  }
}
