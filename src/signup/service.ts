// Self-service sign-up, email verification and password reset (issue #45). Every answer to a
// stranger is the same whether or not the address has an account: sign-up and both "send me a
// link" requests answer 202 after the same work (a password hash, a transaction, maybe an email),
// and what differs goes to the address's owner by email, never into the answer (the two link
// requests do even less in the request: they enqueue a job, signup/link-request-job.ts). Every public
// operation is limited per client address and per email address, in the database (every replica
// counts together), in the counter table sign-in throttling uses.
import { randomBytes } from 'node:crypto';
import { EMAIL_ADDRESS } from '../accounts/service.ts';
import { normalEmail } from '../domain/email.ts';
import type { AuditLog } from '../audit/audit-log.ts';
import { hashPassword } from '../auth/passwords.ts';
import { hashToken, newId } from '../auth/tokens.ts';
import type { Database, Queryable } from '../db/database.ts';
import { consumeEmailLink, expireEmailLinks, findLiveEmailLink, insertEmailLink, type LinkPurpose } from '../db/email-links.ts';
import { sentRecently } from '../db/email-outbox.ts';
import { findPlan } from '../db/plans.ts';
import { insertJob } from '../db/jobs.ts';
import { LINK_REQUEST_JOB } from '../jobs/catalog.ts';
import {
  approveAccount,
  deleteUserSessions,
  findSignupUser,
  findSignupUserById,
  listAwaitingApproval,
  markAwaitingApproval,
  markEmailVerified,
  rejectAccount,
} from '../db/signups.ts';
import { insertOwnAccount, insertUser, updateUserPassword } from '../db/users.ts';
import { clearSignInFailures, countSignInFailures, recordSignInFailure } from '../db/web-sessions.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { EmailKind } from '../mail/templates.ts';
import { checkPasswordStrength } from './password-strength.ts';
import type { SignupConfig } from './settings.ts';

/** Where the emailed links lead (web/ui-routes.ts serves these pages); the secret rides in the fragment, never sent to a server or a Referer. */
export const SIGN_UP_PAGE_PATH = '/sign-up';
export const VERIFY_PAGE_PATH = '/verify-email';
export const RESET_PAGE_PATH = '/reset-password';

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;
const VERIFY_LINK_TTL_S = DAY_S;
const RESET_LINK_TTL_S = HOUR_S;
// Links sent to one address per hour, whoever asks: bounds how much mail a stranger can aim at someone.
const MAX_LINKS_PER_EMAIL_PER_HOUR = 3;
// Wrong or stale links tried from one client address: a secret of 256 bits is not guessed, but a
// script trying is refused early and its tries are in the log.
const MAX_BAD_LINKS_PER_ADDRESS = 20;
const BAD_LINK_WINDOW_S = 15 * 60;
const LINK_SECRET = /^[A-Za-z0-9_-]{43}$/;

/** The one answer to every request that may concern an address someone else owns. */
export const CHECK_YOUR_EMAIL = 'if the address can receive it, a message with a link is on its way; check your email';

export interface SignupServiceDeps {
  db: Database;
  config: SignupConfig;
  mailer: Mailer;
  publicUrl: string;
  serviceName: string;
  audit?: Pick<AuditLog, 'record'>;
  log: Logger;
}

interface Limit {
  key: string;
  max: number;
  windowS: number;
}

export class SignupService {
  constructor(private readonly deps: SignupServiceDeps) {}

  get mode() {
    return this.deps.config.mode;
  }

  /** POST /api/signup: a person and an account of their own, unverified; or an email to the address's owner. */
  async signUp(input: { email: string; password: string }, clientAddress: string) {
    const { db, config } = this.deps;
    if (config.mode !== 'open' && config.mode !== 'approval') {
      throw new AppError('signup_closed', 'this service does not take sign-ups: ask an account owner to invite you, or its operator for an account');
    }
    const email = this.checkEmail(input.email);
    // Before anything about the address is looked at: a refusal here says nothing about it.
    checkPasswordStrength(input.password, [email, this.deps.serviceName]);
    await this.spend([
      { key: 'signup-all', max: config.maxPerHour, windowS: HOUR_S },
      { key: `signup-ip:${clientAddress}`, max: config.maxPerAddressPerHour, windowS: HOUR_S },
      { key: `signup-email:${email}`, max: MAX_LINKS_PER_EMAIL_PER_HOUR, windowS: HOUR_S },
    ]);
    if (!(await findPlan(db, config.plan))) {
      this.deps.log.error({ plan: config.plan }, 'SIGNUP_PLAN names no plan: sign-ups are refused until it does (rln-cloud plan list)');
      throw new AppError('service_unavailable', 'sign-up is not available right now');
    }
    // Hashed whether or not the address is new, so both take the same time.
    const passwordHash = await hashPassword(input.password);
    const outcome = await db.transaction(async (tx) => {
      const created = await insertUser(tx, { id: newId(), email, passwordHash, verified: false });
      if (created) {
        await insertOwnAccount(tx, created.id, config.plan);
        if (config.mode === 'approval') await markAwaitingApproval(tx, created.id);
        await this.sendLink(tx, created.id, email, 'verify');
        return { kind: 'created' as const, userId: created.id };
      }
      const known = (await findSignupUser(tx, email))!;
      // Someone who signed up and lost the message gets a fresh link; a verified owner hears of
      // the attempt, at most once a day.
      if (!known.email_verified_at) {
        // The newest sign-up's password is the one the link verifies (and earlier links end): an
        // address squatted by someone who cannot read its mail is taken back by signing up with it.
        await updateUserPassword(tx, known.id, passwordHash);
        await this.sendLink(tx, known.id, email, 'verify');
      } else if (!(await sentRecently(tx, email, 'signup-attempt', DAY_S))) {
        await this.deps.mailer.enqueue(tx, { kind: 'signup-attempt', to: email, link: this.pageUrl(RESET_PAGE_PATH) });
      }
      return { kind: 'known' as const, userId: known.id, accountId: known.account_id };
    });
    if (outcome.kind === 'created') {
      await this.audit({ userId: outcome.userId, actorUserId: outcome.userId, action: 'user.signed_up', email, clientAddress, details: { mode: config.mode, plan: config.plan } });
    } else {
      await this.audit({ userId: outcome.accountId, actorUserId: null, action: 'user.signup_attempted', email, clientAddress, outcome: 'failed' });
    }
    return { message: CHECK_YOUR_EMAIL };
  }

  /** POST /api/signup/verify: the emailed link proves the address. */
  async verifyEmail(token: string, clientAddress: string) {
    const link = await this.useLink(token, 'verify', clientAddress);
    await this.deps.db.transaction(async (tx) => {
      await markEmailVerified(tx, link.user_id);
      await expireEmailLinks(tx, link.user_id, 'verify');
    });
    const person = await this.personById(link.user_id);
    await this.audit({ userId: person.account_id, actorUserId: person.id, action: 'user.email_verified', email: person.email, clientAddress });
    return { email: person.email, awaitingApproval: person.awaiting_approval_since !== null };
  }

  /** POST /api/signup/resend: a new verification link to an unverified address; the same answer for any address. */
  async resendVerification(emailRaw: string, clientAddress: string) {
    const email = this.checkEmail(emailRaw);
    await this.spend([
      { key: `resend-ip:${clientAddress}`, max: this.deps.config.maxPerAddressPerHour, windowS: HOUR_S },
      { key: `resend-email:${email}`, max: MAX_LINKS_PER_EMAIL_PER_HOUR, windowS: HOUR_S },
    ]);
    await insertJob(this.deps.db, LINK_REQUEST_JOB.newJob({ v: 1, purpose: 'verify', email, sourceIp: clientAddress }));
    return { message: CHECK_YOUR_EMAIL };
  }

  /** POST /api/password-reset: a reset link to the address when it has an account; the same answer either way. */
  async requestPasswordReset(emailRaw: string, clientAddress: string) {
    const email = this.checkEmail(emailRaw);
    await this.spend([
      { key: `reset-ip:${clientAddress}`, max: this.deps.config.maxPerAddressPerHour, windowS: HOUR_S },
      { key: `reset-email:${email}`, max: MAX_LINKS_PER_EMAIL_PER_HOUR, windowS: HOUR_S },
    ]);
    await insertJob(this.deps.db, LINK_REQUEST_JOB.newJob({ v: 1, purpose: 'reset', email, sourceIp: clientAddress }));
    return { message: CHECK_YOUR_EMAIL };
  }

  /**
   * The work behind resend and reset requests, run by their job (signup/link-request-job.ts): a
   * verification link to an address that signed up and is not verified, a reset link to any
   * address with an account; nothing to any other.
   */
  async answerLinkRequest(purpose: LinkPurpose, email: string, clientAddress: string) {
    const person = await this.deps.db.transaction(async (tx) => {
      const found = await findSignupUser(tx, email);
      if (!found || (purpose === 'verify' && found.email_verified_at)) return undefined;
      await this.sendLink(tx, found.id, email, purpose);
      return found;
    });
    if (person && purpose === 'reset') {
      await this.audit({ userId: person.account_id, actorUserId: null, action: 'user.password_reset_requested', email, clientAddress });
    }
  }

  /**
   * POST /api/password-reset/confirm: the emailed link sets a new password and ends every web
   * session of the person (API tokens and certificates stay). Opening the link proves the address too.
   */
  async confirmPasswordReset(input: { token: string; password: string }, clientAddress: string) {
    const { db } = this.deps;
    // Looked at first without using it: a weak password is refused and the link still works.
    const live = await this.peekLink(input.token, 'reset', clientAddress);
    const person = await this.personById(live.user_id);
    checkPasswordStrength(input.password, [person.email, this.deps.serviceName]);
    const passwordHash = await hashPassword(input.password);
    const endedSessions = await db.transaction(async (tx) => {
      // Used here, in the transaction that sets the password: of two uses racing, one wins.
      if (!(await consumeEmailLink(tx, hashToken(input.token), 'reset'))) throw invalidLink();
      await updateUserPassword(tx, person.id, passwordHash);
      await markEmailVerified(tx, person.id);
      await expireEmailLinks(tx, person.id, 'reset');
      return deleteUserSessions(tx, person.id);
    });
    // The old password's failed sign-ins no longer say anything about the new one.
    await clearSignInFailures(db, `email:${person.email}`);
    await this.audit({ userId: person.account_id, actorUserId: person.id, action: 'user.password_reset', email: person.email, clientAddress, details: { endedSessions } });
    return { email: person.email, message: 'your password was changed and every other session signed out; sign in with the new one' };
  }

  /** The operator's `signup list`. */
  async listAwaiting() {
    return (await listAwaitingApproval(this.deps.db)).map((r) => ({
      accountId: r.account_id,
      email: r.email,
      emailVerified: r.email_verified_at !== null,
      waitingSince: r.awaiting_approval_since!.toISOString(),
    }));
  }

  /** The operator's `signup approve <email>`: the account may sign in (once its address is verified). */
  async approve(emailRaw: string) {
    const person = await this.waitingPerson(emailRaw);
    await this.deps.db.transaction(async (tx) => {
      if (!(await approveAccount(tx, person.account_id))) throw notWaiting(person.email);
      await this.deps.mailer.enqueue(tx, { kind: 'signup-approved', to: person.email, link: this.pageUrl('/sign-in') });
    });
    return { accountId: person.account_id, email: person.email, approved: true };
  }

  /** The operator's `signup reject <email>`: the person and their empty account are removed. */
  async reject(emailRaw: string) {
    const person = await this.waitingPerson(emailRaw);
    if (!(await this.deps.db.transaction((tx) => rejectAccount(tx, person.account_id)))) throw notWaiting(person.email);
    return { accountId: person.account_id, email: person.email, rejected: true };
  }

  private async waitingPerson(emailRaw: string) {
    const person = await findSignupUser(this.deps.db, normalEmail(emailRaw));
    if (!person) throw new AppError('user_not_found', `no user with email ${emailRaw}`);
    if (!person.awaiting_approval_since) throw notWaiting(person.email);
    return person;
  }

  private checkEmail(raw: string): string {
    const email = normalEmail(raw);
    if (!EMAIL_ADDRESS.test(email)) throw new AppError('invalid_request', `"${raw.slice(0, 64)}" is not an email address`, { field: 'email' });
    return email;
  }

  private pageUrl(path: string, token?: string) {
    return `${this.deps.publicUrl}${path}${token ? `#token=${token}` : ''}`;
  }

  /** A verification link and its email for a person whose address nothing proved yet (a member who joined through a copied invitation link), in `tx`. */
  async sendVerification(tx: Queryable, userId: string, email: string) {
    await this.sendLink(tx, userId, email, 'verify');
  }

  /** A new one-time link for the person (earlier ones of its purpose stop working) and its email, in `tx`. */
  private async sendLink(tx: Queryable, userId: string, email: string, purpose: LinkPurpose) {
    const token = randomBytes(32).toString('base64url');
    await expireEmailLinks(tx, userId, purpose);
    await insertEmailLink(tx, { tokenHash: hashToken(token), purpose, userId, ttlSeconds: purpose === 'verify' ? VERIFY_LINK_TTL_S : RESET_LINK_TTL_S });
    const kind: EmailKind = purpose === 'verify' ? 'verify-email' : 'password-reset';
    await this.deps.mailer.enqueue(tx, { kind, to: email, link: this.pageUrl(purpose === 'verify' ? VERIFY_PAGE_PATH : RESET_PAGE_PATH, token) });
  }

  private async useLink(token: string, purpose: LinkPurpose, clientAddress: string) {
    await this.checkBadLinkLimit(clientAddress);
    const link = LINK_SECRET.test(token) ? await consumeEmailLink(this.deps.db, hashToken(token), purpose) : undefined;
    if (!link) return this.badLink(clientAddress);
    return link;
  }

  private async peekLink(token: string, purpose: LinkPurpose, clientAddress: string) {
    await this.checkBadLinkLimit(clientAddress);
    const link = LINK_SECRET.test(token) ? await findLiveEmailLink(this.deps.db, hashToken(token), purpose) : undefined;
    if (!link) return this.badLink(clientAddress);
    return link;
  }

  private async checkBadLinkLimit(clientAddress: string) {
    const { failures, retryAfterSeconds } = await countSignInFailures(this.deps.db, `link-ip:${clientAddress}`, BAD_LINK_WINDOW_S);
    if (failures >= MAX_BAD_LINKS_PER_ADDRESS) throw rateLimited('too many invalid links', retryAfterSeconds);
  }

  private async badLink(clientAddress: string): Promise<never> {
    await recordSignInFailure(this.deps.db, `link-ip:${clientAddress}`, BAD_LINK_WINDOW_S);
    this.deps.log.info({ sourceIp: clientAddress }, 'an invalid, used or expired email link was tried');
    throw invalidLink();
  }

  private async personById(userId: string) {
    const person = await findSignupUserById(this.deps.db, userId);
    if (!person) throw invalidLink();
    return person;
  }

  /** Counts one use of each limit, or refuses (429) when any is spent; the same for every address. */
  private async spend(limits: Limit[]) {
    for (const limit of limits) {
      const { failures, retryAfterSeconds } = await countSignInFailures(this.deps.db, limit.key, limit.windowS);
      if (failures >= limit.max) throw rateLimited('too many requests of this kind', retryAfterSeconds);
    }
    for (const limit of limits) await recordSignInFailure(this.deps.db, limit.key, limit.windowS);
  }

  private async audit(e: { userId: string; actorUserId: string | null; action: 'user.signed_up' | 'user.signup_attempted' | 'user.email_verified' | 'user.password_reset_requested' | 'user.password_reset'; email: string; clientAddress: string; outcome?: 'succeeded' | 'failed'; details?: Record<string, unknown> }) {
    await this.deps.audit?.record({
      userId: e.userId,
      actor: 'session',
      actorUserId: e.actorUserId,
      actorEmail: e.email,
      sourceIp: e.clientAddress,
      action: e.action,
      target: e.email,
      outcome: e.outcome ?? 'succeeded',
      details: e.details,
    });
  }
}

const invalidLink = () => new AppError('invalid_link', 'this link is not valid: it was used already, has expired, or was copied wrong; ask for a new one');
const notWaiting = (email: string) => new AppError('invalid_state', `the account of ${email} is not waiting for approval`);
const rateLimited = (what: string, retryAfterSeconds: number) =>
  new AppError('rate_limited', `${what}; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, { retryAfterSeconds });
