// Web UI sessions: sign-in with email and password, a session cookie, a CSRF token per session,
// sign-out, and a limit on failed sign-ins. Sessions live in the database (only a hash of the id),
// so every replica accepts every session.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Bowser from 'bowser';
import { memberOf, type AuthenticatedUser } from '../accounts/service.ts';
import { UNSCOPED } from '../accounts/token-scope.ts';
import type { Database } from '../db/database.ts';
import { findUserByEmail, findUserById, type MemberRow } from '../db/users.ts';
import { findSignupUserById } from '../db/signups.ts';
import {
  clearSignInFailures,
  countSignInFailures,
  deleteExpiredSessions,
  deleteOtherUserSessions,
  deleteSession,
  deleteUserSession,
  findSessionUser,
  insertSession,
  sessionSignedInWithSince,
  listUserSessions,
  recordSignInFailure,
  touchSession,
} from '../db/web-sessions.ts';
import { AppError } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import { hashPassword, verifyPassword } from '../auth/passwords.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import { normalEmail } from '../domain/email.ts';
import { advanceSession } from '../db/two-factor.ts';
import type { FactorInput, TwoFactor } from '../accounts/two-factor.ts';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';

export const CSRF_HEADER = 'x-csrf-token';
// An idle browser is signed out after a day; none stays signed in past a week.
const IDLE_MS = 24 * 3_600_000;
const ABSOLUTE_MS = 7 * 24 * 3_600_000;
// Sliding the expiry on every request would turn each read into a write; a minute is precise enough.
const TOUCH_EVERY_MS = 60_000;
// Failed sign-ins: per email (guessing one account's password) and per client address (trying
// many accounts), counted in fixed windows.
const FAILURE_WINDOW_S = 15 * 60;
const MAX_FAILURES_PER_EMAIL = 5;
const MAX_FAILURES_PER_ADDRESS = 30;
// A sign-in that passed the password but still owes its second factor (or must enrol one) lasts
// this long: enough to find the phone, too short to be worth stealing.
const PENDING_MS = 15 * 60_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// Enough of a User-Agent to name the device; the rest is not worth keeping.
const MAX_USER_AGENT = 512;

/** A session as its person sees it in their list (GET /api/sessions). */
export interface SessionView {
  id: string;
  /** "Chrome 131 on Linux", from the User-Agent the session was opened with. */
  device: string;
  /** The client address it was opened from (request.ip: the real client behind a trusted proxy). */
  address: string | null;
  createdAt: string;
  /** Updated at most once a minute. */
  lastSeenAt: string;
  /** The session this request came with. */
  current: boolean;
}

/** A short name of the device a User-Agent describes (bowser parses it): browser, its major version, and the OS. */
export function describeDevice(userAgent: string | null | undefined): string {
  if (!userAgent) return 'unknown device';
  const parsed = Bowser.parse(userAgent);
  const browser = [parsed.browser.name, parsed.browser.version?.split('.')[0]].filter(Boolean).join(' ');
  const os = parsed.os.name;
  if (!browser && !os) return userAgent.slice(0, 64);
  return browser && os ? `${browser} on ${os}` : browser || os!;
}

/** How a session's person proved who they are. */
export type SignedInWith =
  | { method: 'password' }
  /** A passkey its authenticator verified its user for (a PIN, a fingerprint): two factors at once. */
  | { method: 'passkey' }
  /** `amr`, `acr`: what the provider's ID token says of how it authenticated the person. */
  | { method: 'oidc'; provider: string; amr?: string[]; acr?: string };

export interface SessionUser extends AuthenticatedUser {
  csrfToken: string;
}

/**
 * Where a session stands: `full` (signed in), `second_factor` (the password, or a provider's
 * sign-in, passed; a code is still owed) or `enrol` (the account requires two factors and the
 * person has none: only the enrolment routes answer it).
 */
export type SessionStage = 'full' | 'second_factor' | 'enrol';

/** What the first factor said about itself: an OpenID provider's `amr`/`acr` (web sessions by password say nothing). */
export interface FirstFactor {
  /** The provider vouches that several factors were used (its `amr` has `mfa` or two methods; `acr` is trusted for nothing). */
  multiFactor?: boolean;
}

/** Whether an ID token's `amr` (RFC 8176) says the provider asked more than one factor. */
export function amrSaysMultiFactor(amr: unknown): boolean {
  return Array.isArray(amr) && (amr.includes('mfa') || new Set(amr.filter((m) => typeof m === 'string')).size >= 2);
}

export interface WebSessionOptions {
  db: Database;
  /** Under https the cookie is Secure and carries the __Host- prefix (no Domain, Path=/). */
  secure: boolean;
  /** Sign-ins, failed ones too, go into the account's audit trail. */
  audit?: Pick<AuditLog, 'record'>;
  /** Second factors: without it every sign-in opens a full session. */
  twoFactor?: TwoFactor;
}

const hashId = (id: string) => createHash('sha256').update(id).digest('hex');

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const raw of (header ?? '').split(';')) {
    const part = raw.trim();
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

export class WebSessions {
  readonly cookieName: string;
  // Verified against when the email is unknown, so a wrong email takes as long as a wrong password.
  private readonly dummyHash = hashPassword(randomBytes(16).toString('hex'));

  constructor(private readonly opts: WebSessionOptions) {
    this.cookieName = opts.secure ? '__Host-rlnc_session' : 'rlnc_session';
  }

  private async auditSignIn(
    user: { id: string; account_id: string },
    email: string,
    sourceIp: string,
    outcome: 'succeeded' | 'failed',
    reason?: string,
    method?: 'passkey',
  ) {
    await this.opts.audit?.record({
      userId: user.account_id,
      actor: 'session',
      actorUserId: user.id,
      actorEmail: email,
      sourceIp,
      action: 'session.sign_in',
      target: email,
      outcome,
      ...(reason || method ? { details: { ...(reason && { reason }), ...(method && { method }) } } : {}),
    });
  }

  /** Checks the password and opens a session; throws unauthorized or rate_limited. */
  async signIn(emailRaw: string, password: string, clientAddress: string, userAgent?: string) {
    const email = normalEmail(emailRaw);
    const keys = [`email:${email}`, `ip:${clientAddress}`];
    const limits = [MAX_FAILURES_PER_EMAIL, MAX_FAILURES_PER_ADDRESS];
    for (const [i, key] of keys.entries()) {
      const { failures, retryAfterSeconds } = await countSignInFailures(this.opts.db, key, FAILURE_WINDOW_S);
      if (failures >= limits[i]!) {
        throw new AppError('rate_limited', `too many failed sign-ins; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, {
          retryAfterSeconds,
        });
      }
    }
    const user = await findUserByEmail(this.opts.db, email);
    const ok = user?.password_hash
      ? await verifyPassword(password, user.password_hash)
      : (await verifyPassword(password, await this.dummyHash), false);
    if (!user || !ok) {
      for (const key of keys) await recordSignInFailure(this.opts.db, key, FAILURE_WINDOW_S);
      // In the trail of the account someone tried (an unknown email belongs to no one's).
      if (user) await this.auditSignIn(user, email, clientAddress, 'failed');
      throw new AppError('unauthorized', 'the email or the password is wrong');
    }
    // Told only to whoever knows the password: the answer says nothing about an address to anyone else.
    const signup = await findSignupUserById(this.opts.db, user.id);
    if (signup && !signup.email_verified_at) {
      await this.auditSignIn(user, email, clientAddress, 'failed', 'email not verified');
      throw new AppError('email_not_verified', 'verify your email address first: open the link we emailed you, or ask for a new one on the sign-up page');
    }
    if (signup?.awaiting_approval_since) {
      await this.auditSignIn(user, email, clientAddress, 'failed', 'awaiting approval');
      throw new AppError('awaiting_approval', 'your account is waiting for the operator\'s approval; you will get an email once it is approved');
    }
    await this.auditSignIn(user, email, clientAddress, 'succeeded');
    await clearSignInFailures(this.opts.db, keys[0]!);
    return this.openSession(user, clientAddress, userAgent, { method: 'password' });
  }

  /** The limits on failed sign-ins from one client address, which password and passkey sign-ins share. */
  private async checkAddressNotThrottled(clientAddress: string) {
    const { failures, retryAfterSeconds } = await countSignInFailures(this.opts.db, `ip:${clientAddress}`, FAILURE_WINDOW_S);
    if (failures >= MAX_FAILURES_PER_ADDRESS) {
      throw new AppError('rate_limited', `too many failed sign-ins; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, { retryAfterSeconds });
    }
  }

  /**
   * A sign-in without a password: a passkey's answer to a challenge handed to this browser
   * (`browserKey`, from its one-off cookie). The passkey names its person; with their
   * authenticator's user verification it is two factors, so the session opens full even where the
   * account requires two.
   */
  async signInWithPasskey(browserKey: string, response: AuthenticationResponseJSON, clientAddress: string, userAgent?: string) {
    const passkeys = this.opts.twoFactor?.requirePasskeys();
    if (!passkeys) throw new AppError('invalid_state', 'passkeys are not offered here');
    await this.checkAddressNotThrottled(clientAddress);
    const checked = await passkeys.checkSignIn(browserKey, response);
    const user = checked.ok ? await findUserById(this.opts.db, checked.passkey.userId) : undefined;
    if (!checked.ok || !user) {
      await recordSignInFailure(this.opts.db, `ip:${clientAddress}`, FAILURE_WINDOW_S);
      throw new AppError('unauthorized', 'the passkey was refused: it is not enrolled here, or the sign-in was not started in this browser; try again');
    }
    await this.auditSignIn(user, user.email, clientAddress, 'succeeded', undefined, 'passkey');
    return this.openSession(user, clientAddress, userAgent, { method: 'passkey' });
  }

  /**
   * Opens a session for a person whose first factor passed (a password here; an OpenID provider's
   * sign-in in oidc-routes.ts, with what its `amr`/`acr` said). With a second factor enrolled, or
   * one the account requires, the session opens half-way (`stage`), and the API answers it 401
   * second_factor_required or 403 two_factor_enrolment_required until the step is done: every way
   * in meets the same rule, unless the provider vouches that it asked several factors itself.
   */
  async openSession(user: MemberRow, clientAddress: string, userAgent: string | undefined, signedInWith: SignedInWith) {
    const multiFactor = signedInWith.method === 'passkey' || (signedInWith.method === 'oidc' && amrSaysMultiFactor(signedInWith.amr));
    const stage = await this.stageAfterFirstFactor(user, { multiFactor });
    // Sign-ins are rare: a good moment to forget sessions that ended.
    await deleteExpiredSessions(this.opts.db);
    const sessionId = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    await insertSession(this.opts.db, {
      id: newId(),
      idHash: hashId(sessionId),
      userId: user.id,
      csrfToken,
      expiresAt: new Date(Date.now() + (stage === 'full' ? IDLE_MS : PENDING_MS)),
      userAgent: userAgent ? userAgent.slice(0, MAX_USER_AGENT) : null,
      address: clientAddress,
      stage,
      signedInWith: signedInWith.method,
    });
    return { sessionId, csrfToken, stage, user: { id: user.id, email: user.email, plan: user.plan, accountId: user.account_id, role: user.role } };
  }

  private async stageAfterFirstFactor(user: MemberRow, first: FirstFactor): Promise<SessionStage> {
    const twoFactor = this.opts.twoFactor;
    if (!twoFactor || first.multiFactor) return 'full';
    if (await twoFactor.hasFactor(user.id)) return 'second_factor';
    return (await twoFactor.accountRequires(user.account_id)) ? 'enrol' : 'full';
  }

  /** The request's session at whatever stage, with its CSRF token checked on changes; undefined when there is none. */
  async anyStageOf(request: FastifyRequest): Promise<(SessionUser & { stage: SessionStage }) | undefined> {
    const id = this.sessionIdOf(request);
    if (!id) return undefined;
    const row = await findSessionUser(this.opts.db, hashId(id));
    if (!row) return undefined;
    if (!SAFE_METHODS.has(request.method)) this.checkCsrf(request, row.csrf_token);
    return { ...memberOf(row), tokenId: '', scope: UNSCOPED, csrfToken: row.csrf_token, stage: row.stage as SessionStage };
  }

  /**
   * Moves the request's session to `stage` under a new cookie id and CSRF token, so whatever saw
   * the half-way cookie holds nothing that signs in.
   */
  async advance(request: FastifyRequest, stage: SessionStage) {
    const id = this.sessionIdOf(request);
    if (!id) throw new AppError('unauthorized', 'not signed in');
    const sessionId = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + (stage === 'full' ? IDLE_MS : PENDING_MS));
    if (!(await advanceSession(this.opts.db, hashId(id), { idHash: hashId(sessionId), csrfToken, stage, expiresAt }))) {
      throw new AppError('unauthorized', 'your sign-in ended; sign in again');
    }
    return { sessionId, csrfToken };
  }

  /** The half-signed-in session's second factor: on success the session is a full one (new cookie). */
  async completeSecondFactor(request: FastifyRequest, input: FactorInput) {
    const twoFactor = this.opts.twoFactor;
    const session = await this.anyStageOf(request);
    if (!session || !twoFactor) throw new AppError('unauthorized', 'sign in with your password first');
    if (session.stage !== 'second_factor') throw new AppError('invalid_state', 'this session owes no second factor');
    await twoFactor.check({ id: session.id, email: session.email, accountId: session.accountId }, input, { sourceIp: request.ip, browserKey: this.browserKeyOf(request) }, 'sign_in');
    const advanced = await this.advance(request, 'full');
    return { ...advanced, user: { id: session.id, email: session.email, plan: session.plan } };
  }

  /**
   * Whether the request's session signed in through an OpenID provider less than `seconds` ago:
   * what confirms a deletion for someone with neither a password nor a factor.
   */
  async freshProviderSignIn(request: FastifyRequest, seconds: number): Promise<boolean> {
    const id = this.sessionIdOf(request);
    return id !== undefined && (await sessionSignedInWithSince(this.opts.db, hashId(id), 'oidc', seconds));
  }

  /** The SHA-256 of the request's session cookie: what ties a passkey challenge to the session it was handed to. */
  browserKeyOf(request: FastifyRequest): string | undefined {
    const id = this.sessionIdOf(request);
    return id ? hashId(id) : undefined;
  }

  sessionIdOf(request: FastifyRequest): string | undefined {
    const value = parseCookies(request.headers.cookie).get(this.cookieName);
    return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
  }

  hasSessionCookie(request: FastifyRequest): boolean {
    return parseCookies(request.headers.cookie).has(this.cookieName);
  }

  /** The user of the request's session, or undefined when there is none or it ended. */
  async userOf(request: FastifyRequest): Promise<SessionUser | undefined> {
    const id = this.sessionIdOf(request);
    if (!id) return undefined;
    const row = await findSessionUser(this.opts.db, hashId(id));
    if (!row || row.stage !== 'full') return undefined;
    if (Date.now() - row.last_seen_at.getTime() > TOUCH_EVERY_MS) {
      await touchSession(this.opts.db, hashId(id), new Date(Date.now() + IDLE_MS), ABSOLUTE_MS / 1000);
    }
    // A signed-in user may do everything the account may: sessions have no scope.
    return { ...memberOf(row), tokenId: '', scope: UNSCOPED, csrfToken: row.csrf_token };
  }

  /**
   * Authenticates an API request by its session cookie. State-changing methods must also carry
   * the session's CSRF token in the X-CSRF-Token header: a cross-site page can make the browser
   * send the cookie, but it cannot read the token.
   */
  async authenticate(request: FastifyRequest): Promise<AuthenticatedUser | undefined> {
    const user = await this.userOf(request);
    if (!user) {
      // A half-signed-in session reaches nothing here: its person is told what is still owed.
      const id = this.sessionIdOf(request);
      const stage = id ? (await findSessionUser(this.opts.db, hashId(id)))?.stage : undefined;
      if (stage === 'second_factor') throw new AppError('second_factor_required', 'finish signing in: send the code from your authenticator to POST /api/session/second-factor');
      if (stage === 'enrol') throw new AppError('two_factor_enrolment_required', 'your account requires two factors: enrol an authenticator first (/api/me/2fa)');
      return undefined;
    }
    if (!SAFE_METHODS.has(request.method)) this.checkCsrf(request, user.csrfToken);
    const { csrfToken: _, ...authenticated } = user;
    return authenticated;
  }

  private checkCsrf(request: FastifyRequest, expected: string) {
    const sent = request.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || !sameSecret(sent, expected)) {
      throw new AppError('forbidden', `this request needs your session's CSRF token in the ${CSRF_HEADER} header; reload the page`);
    }
  }

  /** The user's live sessions, the one `request` came with marked current. */
  async listSessions(userId: string, request: FastifyRequest): Promise<SessionView[]> {
    const currentHash = this.currentHash(request);
    return (await listUserSessions(this.opts.db, userId)).map((row) => ({
      id: row.id,
      device: describeDevice(row.user_agent),
      address: row.address,
      createdAt: row.created_at.toISOString(),
      lastSeenAt: row.last_seen_at.toISOString(),
      current: row.id_hash === currentHash,
    }));
  }

  /** Ends one of the user's sessions; another person's session id answers like a missing one. */
  async endSession(userId: string, sessionId: string): Promise<void> {
    if (!(await deleteUserSession(this.opts.db, userId, sessionId))) throw new AppError('session_not_found', `session ${sessionId} was not found`);
  }

  /** Ends every session of the user but the one `request` came with (all of them when it came with a token); returns how many. */
  async endOtherSessions(userId: string, request: FastifyRequest): Promise<number> {
    return deleteOtherUserSessions(this.opts.db, userId, this.currentHash(request));
  }

  private currentHash(request: FastifyRequest): string | undefined {
    // A request with a token is the token's, even if the browser also sent a cookie (bearer-auth.ts).
    if (request.headers.authorization !== undefined) return undefined;
    const id = this.sessionIdOf(request);
    return id ? hashId(id) : undefined;
  }

  async signOut(request: FastifyRequest): Promise<void> {
    const id = this.sessionIdOf(request);
    if (id) await deleteSession(this.opts.db, hashId(id));
  }

  setCookie(reply: FastifyReply, sessionId: string) {
    reply.header('set-cookie', this.cookie(sessionId, ABSOLUTE_MS / 1000));
  }

  clearCookie(reply: FastifyReply) {
    reply.header('set-cookie', this.cookie('', 0));
  }

  private cookie(value: string, maxAgeSeconds: number) {
    return `${this.cookieName}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${this.opts.secure ? '; Secure' : ''}`;
  }
}
