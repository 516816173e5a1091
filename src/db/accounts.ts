// An account's members and invitations (migration 0020). The account's id is the id of the user who created it;
// a user is a member of exactly one account, so removing a member removes the user.
import type { Queryable } from './database.ts';
import type { Role } from '../domain/roles.ts';

export interface AccountMemberRow {
  user_id: string;
  email: string;
  role: Role;
  created_at: Date;
}

export interface InvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: Exclude<Role, 'owner'>;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
  /** Its link went to the invitee by email: accepting it proves the address (migration 0036). */
  emailed: boolean;
}

const INVITATION_COLUMNS = 'id, account_id, email, role, invited_by, created_at, expires_at, accepted_at, revoked_at, emailed';

/** The account's members, the owner first, then by when they joined. */
export async function listAccountMembers(db: Queryable, accountId: string) {
  return db.query<AccountMemberRow>(
    `SELECT m.user_id, u.email, m.role, m.created_at FROM account_members m JOIN users u ON u.id = m.user_id
     WHERE m.account_id = $1 ORDER BY (m.role = 'owner') DESC, m.created_at, m.user_id`,
    [accountId],
  );
}

export async function findAccountMember(db: Queryable, accountId: string, userId: string) {
  return (
    await db.query<AccountMemberRow>(
      `SELECT m.user_id, u.email, m.role, m.created_at FROM account_members m JOIN users u ON u.id = m.user_id
       WHERE m.account_id = $1 AND m.user_id = $2`,
      [accountId, userId],
    )
  )[0];
}

/** The current role of each of these users that is still a member (a removed one is missing). */
export async function memberRolesOf(db: Queryable, userIds: readonly string[]): Promise<Map<string, Role>> {
  const rows = await db.query<{ user_id: string; role: Role }>('SELECT user_id, role FROM account_members WHERE user_id = ANY($1::text[])', [[...userIds]]);
  return new Map(rows.map((r) => [r.user_id, r.role]));
}

export async function updateMemberRole(db: Queryable, accountId: string, userId: string, role: Role) {
  await db.query('UPDATE account_members SET role = $3 WHERE account_id = $1 AND user_id = $2', [accountId, userId, role]);
}

export async function insertMember(db: Queryable, accountId: string, userId: string, role: Role) {
  await db.query('INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $2, $3)', [accountId, userId, role]);
}

/**
 * Deletes a member who is not the owner, with their user row: their tokens, sessions and
 * certificates go with it (ON DELETE CASCADE). True when there was such a member. The user whose id
 * is the account's may be one after an ownership transfer; the account does not go with them
 * (migration 0030).
 */
export async function deleteNonOwnerMember(db: Queryable, accountId: string, userId: string) {
  const rows = await db.query<{ id: string }>(
    `DELETE FROM users u WHERE u.id = $2
       AND EXISTS (SELECT 1 FROM account_members m WHERE m.account_id = $1 AND m.user_id = u.id AND m.role <> 'owner')
     RETURNING u.id`,
    [accountId, userId],
  );
  return rows.length > 0;
}

/**
 * Locks the account's row: inviting counts members and pending invitations against the plan's
 * max_users, and two invitations at once must not both pass the count.
 */
export async function lockAccount(db: Queryable, accountId: string) {
  return (await db.query<{ id: string }>('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId])).length > 0;
}

/** When the account was made (for one made by migration 0020: then; nothing was metered before). */
export async function findAccountCreatedAt(db: Queryable, accountId: string): Promise<Date | undefined> {
  return (await db.query<{ created_at: Date }>('SELECT created_at FROM accounts WHERE id = $1', [accountId]))[0]?.created_at;
}

/** Members, and invitations that can still be accepted: together, the seats the plan's max_users counts. */
export async function countSeats(db: Queryable, accountId: string) {
  const row = (
    await db.query<{ members: number; pending: number }>(
      `SELECT (SELECT count(*)::int FROM account_members WHERE account_id = $1) AS members,
              (SELECT count(*)::int FROM account_invitations
                WHERE account_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()) AS pending`,
      [accountId],
    )
  )[0];
  return { members: Number(row?.members ?? 0), pending: Number(row?.pending ?? 0) };
}

export async function insertInvitation(
  db: Queryable,
  i: { id: string; accountId: string; email: string; role: InvitationRow['role']; tokenHash: string; invitedBy: string; expiresAt: Date; emailed: boolean },
) {
  return (
    await db.query<InvitationRow>(
      `INSERT INTO account_invitations (id, account_id, email, role, token_hash, invited_by, expires_at, emailed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${INVITATION_COLUMNS}`,
      [i.id, i.accountId, i.email, i.role, i.tokenHash, i.invitedBy, i.expiresAt, i.emailed],
    )
  )[0]!;
}

/** Invitations that can still be accepted, oldest first. */
export async function listPendingInvitations(db: Queryable, accountId: string) {
  return db.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM account_invitations
     WHERE account_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
     ORDER BY created_at, id`,
    [accountId],
  );
}

/** Revokes one of the account's unaccepted invitations; undefined when it has no such invitation. */
export async function revokeInvitation(db: Queryable, accountId: string, id: string) {
  return (
    await db.query<InvitationRow>(
      `UPDATE account_invitations SET revoked_at = coalesce(revoked_at, now())
       WHERE account_id = $1 AND id = $2 AND accepted_at IS NULL RETURNING ${INVITATION_COLUMNS}`,
      [accountId, id],
    )
  )[0];
}

/**
 * Revokes the pending invitations a member made: removing them, or demoting them below admin, must
 * not leave a way back in. Returns how many.
 */
export async function revokePendingInvitationsMadeBy(db: Queryable, accountId: string, userId: string) {
  const rows = await db.query<{ id: string }>(
    `UPDATE account_invitations SET revoked_at = now()
     WHERE account_id = $1 AND invited_by = $2 AND accepted_at IS NULL AND revoked_at IS NULL
     RETURNING id`,
    [accountId, userId],
  );
  return rows.length;
}

/** The account's revoked invitations that were never accepted, the latest revoked first, at most `limit`. */
export async function listRevokedInvitations(db: Queryable, accountId: string, limit: number) {
  return db.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM account_invitations
     WHERE account_id = $1 AND accepted_at IS NULL AND revoked_at IS NOT NULL
     ORDER BY revoked_at DESC, id LIMIT $2`,
    [accountId, limit],
  );
}

/** Revokes the account's pending invitations of one email: a new invitation replaces them. */
export async function revokePendingInvitationsOf(db: Queryable, accountId: string, email: string) {
  await db.query(
    `UPDATE account_invitations SET revoked_at = now()
     WHERE account_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL`,
    [accountId, email],
  );
}

/** The invitation with this secret's hash, locked so it is accepted once. */
export async function lockInvitationByTokenHash(db: Queryable, tokenHash: string) {
  return (await db.query<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM account_invitations WHERE token_hash = $1 FOR UPDATE`, [tokenHash]))[0];
}

export async function markInvitationAccepted(db: Queryable, id: string) {
  await db.query('UPDATE account_invitations SET accepted_at = now() WHERE id = $1', [id]);
}
