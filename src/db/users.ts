// Users, their membership of an account, and their API tokens.
import type { Queryable } from './database.ts';
import type { Plan } from '../domain/plans.ts';
import type { Role } from '../domain/roles.ts';

export interface UserRow {
  id: string;
  email: string;
  password_hash: string | null;
  created_at: Date;
}

/** A user with the account they are a member of (every user is a member of exactly one). */
export interface MemberRow extends UserRow {
  account_id: string;
  role: Role;
  plan: Plan;
}

/** Selects MemberRow columns; `u` is the users row, joined to its membership and account. */
export const MEMBER_COLUMNS = 'u.id, u.email, u.password_hash, u.created_at, m.account_id, m.role, a.plan';
export const MEMBER_JOIN = 'JOIN account_members m ON m.user_id = u.id JOIN accounts a ON a.id = m.account_id';

export interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  read_only: boolean;
  /** NULL: every node of the user (accounts/token-scope.ts). */
  node_ids: string[] | null;
  access: 'all' | 'api' | 'gateway';
}

const TOKEN_COLUMNS = 'id, user_id, name, created_at, last_used_at, expires_at, revoked_at, read_only, node_ids, access';

/**
 * A user; undefined when the email is taken. Call inside a transaction with their membership.
 * `verified: false` (self-service sign-up) until they open the emailed link; the operator's users are verified.
 */
export async function insertUser(db: Queryable, u: { id: string; email: string; passwordHash: string | null; verified?: boolean }) {
  const rows = await db.query<UserRow>(
    `INSERT INTO users (id, email, password_hash, email_verified_at) VALUES ($1, $2, $3, CASE WHEN $4::boolean THEN now() END)
     ON CONFLICT (email) DO NOTHING RETURNING *`,
    [u.id, u.email, u.passwordHash, u.verified ?? true],
  );
  return rows[0];
}

/** An account of its own for a new user, who owns it: its id is theirs (migration 0020). */
export async function insertOwnAccount(db: Queryable, userId: string, plan: Plan) {
  await db.query('INSERT INTO accounts (id, plan) VALUES ($1, $2)', [userId, plan]);
  await db.query(`INSERT INTO account_members (account_id, user_id, role) VALUES ($1, $1, 'owner')`, [userId]);
}

export async function findUserByEmail(db: Queryable, email: string) {
  return (await db.query<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM users u ${MEMBER_JOIN} WHERE u.email = $1`, [email]))[0];
}

export async function countUsers(db: Queryable) {
  return Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users'))[0]?.n ?? 0);
}

export async function updateUserPassword(db: Queryable, userId: string, passwordHash: string) {
  await db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
}

export async function insertToken(
  db: Queryable,
  t: { id: string; userId: string; name: string; tokenHash: string; expiresAt: Date | null; readOnly: boolean; nodeIds: readonly string[] | null; access: TokenRow['access'] },
) {
  return (
    await db.query<TokenRow>(
      `INSERT INTO api_tokens (id, user_id, name, token_hash, expires_at, read_only, node_ids, access) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING ${TOKEN_COLUMNS}`,
      [t.id, t.userId, t.name, t.tokenHash, t.expiresAt, t.readOnly, t.nodeIds, t.access],
    )
  )[0]!;
}

/** The member who holds a live (not revoked, not expired) token, or undefined (also once they were removed). */
export async function findUserByTokenHash(db: Queryable, tokenHash: string) {
  return (
    await db.query<MemberRow & Pick<TokenRow, 'last_used_at' | 'read_only' | 'node_ids' | 'access'> & { token_id: string; token_expires_at: Date | null }>(
      `SELECT ${MEMBER_COLUMNS}, t.id AS token_id, t.last_used_at, t.read_only, t.node_ids, t.access, t.expires_at AS token_expires_at
       FROM api_tokens t JOIN users u ON u.id = t.user_id ${MEMBER_JOIN}
       WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())`,
      [tokenHash],
    )
  )[0];
}

export async function touchToken(db: Queryable, tokenId: string) {
  await db.query('UPDATE api_tokens SET last_used_at = now() WHERE id = $1', [tokenId]);
}

export async function revokeToken(db: Queryable, tokenId: string) {
  return (
    await db.query<TokenRow>(
      `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
       RETURNING ${TOKEN_COLUMNS}`,
      [tokenId],
    )
  )[0];
}

/** The user's tokens, oldest first; with `page`, at most `limit` of them after the token `afterId`. */
export async function listTokens(db: Queryable, userId: string, page?: { limit: number; afterId?: string }) {
  if (!page) return db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
  return db.query<TokenRow>(
    `SELECT ${TOKEN_COLUMNS} FROM api_tokens
     WHERE user_id = $1 AND ($2::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM api_tokens WHERE id = $2))
     ORDER BY created_at, id LIMIT $3`,
    [userId, page.afterId ?? null, page.limit],
  );
}

export async function findUserToken(db: Queryable, userId: string, tokenId: string) {
  return (await db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = $1 AND user_id = $2`, [tokenId, userId]))[0];
}

export async function findUserById(db: Queryable, userId: string) {
  return (await db.query<MemberRow>(`SELECT ${MEMBER_COLUMNS} FROM users u ${MEMBER_JOIN} WHERE u.id = $1`, [userId]))[0];
}
