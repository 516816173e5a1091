// What sign-up adds to users and accounts (migration 0029): verified addresses, accounts awaiting approval.
import type { Queryable } from './database.ts';

export interface SignupUserRow {
  id: string;
  email: string;
  account_id: string;
  email_verified_at: Date | null;
  awaiting_approval_since: Date | null;
}

/** The person with this (normalised) email, whether verified and whether their account waits. */
export async function findSignupUser(db: Queryable, email: string) {
  return (
    await db.query<SignupUserRow>(
      `SELECT u.id, u.email, m.account_id, u.email_verified_at, a.awaiting_approval_since
       FROM users u JOIN account_members m ON m.user_id = u.id JOIN accounts a ON a.id = m.account_id WHERE u.email = $1`,
      [email],
    )
  )[0];
}

export async function findSignupUserById(db: Queryable, userId: string) {
  return (
    await db.query<SignupUserRow>(
      `SELECT u.id, u.email, m.account_id, u.email_verified_at, a.awaiting_approval_since
       FROM users u JOIN account_members m ON m.user_id = u.id JOIN accounts a ON a.id = m.account_id WHERE u.id = $1`,
      [userId],
    )
  )[0];
}

export async function markEmailVerified(db: Queryable, userId: string) {
  await db.query('UPDATE users SET email_verified_at = coalesce(email_verified_at, now()) WHERE id = $1', [userId]);
}

export async function markAwaitingApproval(db: Queryable, accountId: string) {
  await db.query('UPDATE accounts SET awaiting_approval_since = now() WHERE id = $1', [accountId]);
}

/** Accounts waiting for the operator, oldest first, with their owner's address. */
export async function listAwaitingApproval(db: Queryable) {
  return db.query<SignupUserRow>(
    `SELECT u.id, u.email, m.account_id, u.email_verified_at, a.awaiting_approval_since
     FROM accounts a JOIN account_members m ON m.account_id = a.id AND m.role = 'owner' JOIN users u ON u.id = m.user_id
     WHERE a.awaiting_approval_since IS NOT NULL ORDER BY a.awaiting_approval_since, a.id`,
  );
}

/** Lets a waiting account in; false when it was not waiting. */
export async function approveAccount(db: Queryable, accountId: string) {
  return (await db.query('UPDATE accounts SET awaiting_approval_since = NULL WHERE id = $1 AND awaiting_approval_since IS NOT NULL RETURNING id', [accountId])).length > 0;
}

/** Removes a waiting account's owner, and with them the account (cascade); false when it was not waiting. */
export async function rejectAccount(db: Queryable, accountId: string) {
  const rows = await db.query(`SELECT id FROM accounts WHERE id = $1 AND awaiting_approval_since IS NOT NULL FOR UPDATE`, [accountId]);
  if (rows.length === 0) return false;
  await db.query('DELETE FROM users WHERE id = $1', [accountId]);
  return true;
}

/** Ends every web session of the person (a password reset). */
export async function deleteUserSessions(db: Queryable, userId: string) {
  const rows = await db.query('DELETE FROM web_sessions WHERE user_id = $1 RETURNING id_hash', [userId]);
  return rows.length;
}
