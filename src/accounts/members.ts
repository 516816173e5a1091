// An account's members and invitations (issue #27): the owner or an admin invites by email with
// a role; with SMTP_URL set the one-time link is emailed to the invitee (and never shown to the
// inviter), without it the inviter is given the link to pass on. Whoever opens it sets a password
// and becomes a member; only an emailed link proves the address (issue #45): a person who joins
// through a copied one verifies it by the emailed link sign-up uses before they can sign in.
// Members are listed, their role changed, and removed: a user belongs to one account, so removing
// a member removes the user, and with it their tokens, sessions and certificates at once.
// Removing a member, or demoting them below admin, also revokes the invitations they made, in the
// same transaction (issue #36): an invitation must not outlive its maker's right to invite.
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../db/database.ts';
import {
  countSeats,
  deleteNonOwnerMember,
  findAccountMember,
  insertInvitation,
  insertMember,
  listAccountMembers,
  listPendingInvitations,
  listRevokedInvitations,
  lockAccount,
  lockInvitationByTokenHash,
  markInvitationAccepted,
  revokeInvitation,
  revokePendingInvitationsMadeBy,
  revokePendingInvitationsOf,
  updateMemberRole,
  type AccountMemberRow,
  type InvitationRow,
} from '../db/accounts.ts';
import { findUserByEmail, insertUser } from '../db/users.ts';
import { countSignInFailures, recordSignInFailure } from '../db/web-sessions.ts';
import { findAccountPlan } from '../db/plans.ts';
import { INVITABLE_ROLES, roleAllows, type Role } from '../domain/roles.ts';
import { AppError } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import { hashPassword } from '../auth/passwords.ts';
import { EMAIL_ADDRESS, type AccountService, type AuthenticatedUser } from './service.ts';
import { normalEmail } from '../domain/email.ts';
import type { Mailer } from '../mail/mailer.ts';

/** How long an invitation link can be used. */
export const INVITATION_TTL_MS = 7 * 86_400_000;
/** The most revoked invitations GET /api/account/invitations?status=revoked lists (the latest). */
export const REVOKED_INVITATIONS_LISTED = 100;
/** The web UI's page an invitation link opens; the secret rides in the fragment, which browsers never send. */
export const INVITATION_PAGE_PATH = '/invitation';

// The same shape as every secret we hand out: 256 random bits, base64url.
const INVITATION_SECRET = /^[A-Za-z0-9_-]{43}$/;

// Failed accepts are limited like failed sign-ins (web/sessions.ts), in the same table shared by
// replicas: per client address (guessing secrets) and per secret (one link tried over and over).
const ACCEPT_FAILURE_WINDOW_S = 15 * 60;
const MAX_ACCEPT_FAILURES_PER_ADDRESS = 30;
const MAX_ACCEPT_FAILURES_PER_INVITATION = 5;

export type InvitableRole = (typeof INVITABLE_ROLES)[number];

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');
const isInvitable = (role: string): role is InvitableRole => (INVITABLE_ROLES as readonly string[]).includes(role);

export interface MemberView {
  userId: string;
  email: string;
  role: Role;
  joinedAt: string;
}

export interface InvitationView {
  id: string;
  email: string;
  role: InvitableRole;
  createdAt: string;
  expiresAt: string;
  /** Only on a revoked invitation. */
  revokedAt?: string;
}

export class MemberService {
  constructor(
    private readonly deps: {
      db: Database;
      accounts: Pick<AccountService, 'memberChanged'>;
      /** The service's public base URL (PUBLIC_URL): invitation links point at its web UI. */
      publicUrl: string;
      /** Emails invitation links when it delivers (SMTP_URL); absent: links are handed to the inviter. */
      mailer?: Pick<Mailer, 'enqueue' | 'delivers'>;
      /** Writes a verification link and its email for a person who joined through a copied link (signup/service.ts); absent (tests of other things), none is written. */
      signup?: { sendVerification(tx: Queryable, userId: string, email: string): Promise<void> };
    },
  ) {}

  /**
   * A one-time invitation into the inviter's account. Members plus pending invitations may not
   * pass the plan's max_users (403 plan_limit_reached). An email that already has a user is
   * refused now rather than at acceptance: a user belongs to one account. A pending invitation of
   * the same email is revoked: the new one replaces it.
   */
  async invite(inviter: AuthenticatedUser, input: { email: string; role: string }): Promise<InvitationView & { emailed: boolean; invitationUrl?: string }> {
    const email = normalEmail(input.email);
    if (!EMAIL_ADDRESS.test(email)) throw new AppError('invalid_request', `"${input.email.slice(0, 64)}" is not an email address`, { field: 'email' });
    if (!isInvitable(input.role)) throw new AppError('invalid_request', `role must be one of ${INVITABLE_ROLES.join(', ')}`, { field: 'role' });
    const role = input.role;
    const secret = randomBytes(32).toString('base64url');
    const emailed = this.deps.mailer?.delivers ?? false;
    const row = await this.deps.db.transaction(async (tx) => {
      if (!(await lockAccount(tx, inviter.accountId))) throw new AppError('unauthorized', 'your account no longer exists');
      // The inviter's role as it is now, under the account's lock: a removal or demotion that
      // committed since the request was authenticated must not leave an invitation it did not revoke.
      const self = await findAccountMember(tx, inviter.accountId, inviter.id);
      if (!self) throw new AppError('unauthorized', 'you are no longer a member of this account');
      if (!roleAllows(self.role, 'admin')) {
        throw new AppError('forbidden_role', `your role in this account is ${self.role}; inviting needs admin or above`, { role: self.role, leastRole: 'admin' });
      }
      if (await findUserByEmail(tx, email)) throw userExists(email);
      // Inviting the same person again replaces the earlier link (lost, or sent with the wrong
      // role) rather than holding a second seat for them.
      await revokePendingInvitationsOf(tx, inviter.accountId, email);
      const plan = await findAccountPlan(tx, inviter.accountId);
      const { members, pending } = await countSeats(tx, inviter.accountId);
      const seats = members + pending;
      if (plan && plan.maxUsers !== null && seats >= plan.maxUsers) {
        throw new AppError(
          'plan_limit_reached',
          `the ${plan.name} plan allows ${plan.maxUsers} user${plan.maxUsers === 1 ? '' : 's'}, members and pending invitations together; revoke an invitation, remove a member or change plan`,
          { limit: 'users', max: plan.maxUsers, used: seats, plan: plan.name },
        );
      }
      const invitation = await insertInvitation(tx, {
        id: newId(),
        accountId: inviter.accountId,
        email,
        role,
        tokenHash: hashSecret(secret),
        invitedBy: inviter.id,
        expiresAt: new Date(Date.now() + INVITATION_TTL_MS),
        emailed,
      });
      if (emailed) {
        await this.deps.mailer!.enqueue(tx, { kind: 'invitation', to: email, link: this.invitationUrl(secret), facts: { inviter: self.email, role } });
      }
      return invitation;
    });
    // Emailed, the link is the invitee's alone: whoever made the invitation never sees it.
    return emailed ? { ...presentInvitation(row), emailed: true } : { ...presentInvitation(row), emailed: false, invitationUrl: this.invitationUrl(secret) };
  }

  private invitationUrl(secret: string) {
    return `${this.deps.publicUrl.replace(/\/+$/, '')}${INVITATION_PAGE_PATH}#token=${secret}`;
  }

  /** Those that can still be accepted, oldest first; or the latest revoked ones (never accepted), the latest first. */
  async listInvitations(accountId: string, status: 'pending' | 'revoked' = 'pending'): Promise<InvitationView[]> {
    if (status === 'revoked') return (await listRevokedInvitations(this.deps.db, accountId, REVOKED_INVITATIONS_LISTED)).map(presentInvitation);
    return (await listPendingInvitations(this.deps.db, accountId)).map(presentInvitation);
  }

  /** Another account's invitation answers exactly like a missing one. */
  async revokeInvitation(accountId: string, id: string): Promise<InvitationView> {
    const row = await revokeInvitation(this.deps.db, accountId, id);
    if (!row) throw new AppError('invitation_not_found', `invitation ${id} was not found`);
    return presentInvitation(row);
  }

  /**
   * Accepts an invitation with its secret: a new user with the invitation's email and role, a
   * member of its account. Once only, within INVITATION_TTL_MS; an unknown, used, revoked or
   * expired secret all answer the same 404 so a link cannot be probed for which it is. The secret
   * is checked before the password is hashed (scrypt, tens of milliseconds of CPU), so a wrong one
   * costs a lookup; failures are limited per client address and per secret (429 rate_limited).
   */
  async accept(input: { token: string; password: string }, clientAddress: string) {
    if (input.password.length < 8) throw new AppError('invalid_request', 'password must be at least 8 characters', { field: 'password' });
    const gone = () => new AppError('invitation_not_found', 'this invitation link is not valid: it was used, revoked or has expired; ask for a new one');
    const tokenHash = hashSecret(input.token);
    const limits = [
      { key: `accept-ip:${clientAddress}`, max: MAX_ACCEPT_FAILURES_PER_ADDRESS },
      { key: `accept-invitation:${tokenHash}`, max: MAX_ACCEPT_FAILURES_PER_INVITATION },
    ];
    for (const { key, max } of limits) {
      const { failures, retryAfterSeconds } = await countSignInFailures(this.deps.db, key, ACCEPT_FAILURE_WINDOW_S);
      if (failures >= max) {
        throw new AppError('rate_limited', `too many failed invitation accepts; try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s)`, {
          retryAfterSeconds,
        });
      }
    }
    const failed = async (err: AppError) => {
      for (const { key } of limits) await recordSignInFailure(this.deps.db, key, ACCEPT_FAILURE_WINDOW_S);
      return err;
    };
    if (!INVITATION_SECRET.test(input.token)) throw await failed(gone());
    // First look: only a live invitation whose email is free is worth a hash.
    const invitation = await this.deps.db.transaction((tx) => liveInvitation(tx, tokenHash));
    if (!invitation) throw await failed(gone());
    if (await findUserByEmail(this.deps.db, invitation.email)) throw await failed(userExists(invitation.email));
    const passwordHash = await hashPassword(input.password);
    // Looked at again under the lock: of two accepts of one secret racing past the first look, one wins.
    const joined = await this.deps.db.transaction(async (tx) => {
      const locked = await liveInvitation(tx, tokenHash);
      if (!locked) return undefined;
      // Only a link that went to the address by email proves it; a copied one could be anyone's.
      const user = await insertUser(tx, { id: newId(), email: locked.email, passwordHash, verified: locked.emailed });
      if (!user) throw userExists(locked.email);
      await insertMember(tx, locked.account_id, user.id, locked.role);
      await markInvitationAccepted(tx, locked.id);
      if (!locked.emailed) await this.deps.signup?.sendVerification(tx, user.id, user.email);
      return { userId: user.id, email: user.email, accountId: locked.account_id, role: locked.role, invitationId: locked.id, emailVerified: locked.emailed };
    });
    if (!joined) throw await failed(gone());
    return joined;
  }

  async listMembers(accountId: string): Promise<MemberView[]> {
    return (await listAccountMembers(this.deps.db, accountId)).map(presentMember);
  }

  /** A member's new role: never to or from owner (an account has exactly one; it changes hands only by a transfer, ownership-transfer.ts). */
  async changeRole(accountId: string, userId: string, role: string): Promise<MemberView> {
    if (!isInvitable(role)) throw new AppError('invalid_request', `role must be one of ${INVITABLE_ROLES.join(', ')}; an account has one owner`, { field: 'role' });
    const member = await this.deps.db.transaction(async (tx) => {
      // Serialised with invitations (invite() takes the same lock): none of theirs slips past the revocation below.
      await lockAccount(tx, accountId);
      const found = await this.requireMember(tx, accountId, userId);
      if (found.role === 'owner') throw new AppError('forbidden', "the owner's role cannot be changed");
      await updateMemberRole(tx, accountId, userId, role);
      // Below admin they may no longer invite: what they invited goes with that right.
      if (!roleAllows(role, 'admin')) await revokePendingInvitationsMadeBy(tx, accountId, userId);
      return { ...found, role };
    });
    // Their remembered tokens and certificates carried the old role; their open streams recheck.
    this.deps.accounts.memberChanged(userId);
    return presentMember(member);
  }

  /** Removes a member who is not the owner; their tokens, sessions, certificates, event streams and invitations stop at once. */
  async removeMember(accountId: string, userId: string, ownerRefusal = 'the owner cannot be removed from their account'): Promise<MemberView> {
    const member = await this.deps.db.transaction(async (tx) => {
      await lockAccount(tx, accountId);
      const found = await this.requireMember(tx, accountId, userId);
      if (found.role === 'owner') throw new AppError('forbidden', ownerRefusal);
      // Before the user row goes: its deletion would only set invited_by to NULL, leaving the links valid.
      await revokePendingInvitationsMadeBy(tx, accountId, userId);
      if (!(await deleteNonOwnerMember(tx, accountId, userId))) throw memberNotFound(userId);
      return found;
    });
    this.deps.accounts.memberChanged(userId);
    return presentMember(member);
  }

  /** A member leaves: exactly a removal of themselves (their user goes, every credential with it). The owner hands the account over or deletes it instead. */
  async leave(member: AuthenticatedUser): Promise<MemberView> {
    return this.removeMember(member.accountId, member.id, 'the owner cannot leave their account: hand it to an admin first (POST /api/account/transfer), or delete it');
  }

  private async requireMember(db: Queryable, accountId: string, userId: string) {
    const found = await findAccountMember(db, accountId, userId);
    if (!found) throw memberNotFound(userId);
    return found;
  }
}

/** The invitation of a secret's hash, locked, when it can still be accepted. */
async function liveInvitation(tx: Queryable, tokenHash: string) {
  const invitation = await lockInvitationByTokenHash(tx, tokenHash);
  if (!invitation || invitation.accepted_at || invitation.revoked_at || invitation.expires_at.getTime() <= Date.now()) return undefined;
  return invitation;
}

const memberNotFound = (userId: string) => new AppError('member_not_found', `member ${userId} was not found`);
const userExists = (email: string) =>
  new AppError('user_exists', `a user with email ${email} already exists; a user belongs to one account, so they cannot join another`);

const presentMember = (m: AccountMemberRow): MemberView => ({ userId: m.user_id, email: m.email, role: m.role, joinedAt: m.created_at.toISOString() });

const presentInvitation = (i: InvitationRow): InvitationView => ({
  id: i.id,
  email: i.email,
  role: i.role,
  createdAt: i.created_at.toISOString(),
  expiresAt: i.expires_at.toISOString(),
  ...(i.revoked_at ? { revokedAt: i.revoked_at.toISOString() } : {}),
});
