// Second factors (migration 0032): a person's TOTP secret and its last accepted time step, their
// recovery codes (hashes only), an account's rule that every member has one, and a session's stage.
import type { Queryable } from './database.ts';

export interface TotpRow {
  user_id: string;
  secret: string;
  confirmed_at: Date | null;
  last_step: string | number | null;
}

export async function findTotp(db: Queryable, userId: string) {
  return (await db.query<TotpRow>('SELECT user_id, secret, confirmed_at, last_step FROM user_totp WHERE user_id = $1', [userId]))[0];
}

/** A new, unconfirmed secret; replaces an unconfirmed one, never a confirmed one (false then). */
export async function putUnconfirmedTotp(db: Queryable, userId: string, secret: string) {
  const rows = await db.query<{ user_id: string }>(
    `INSERT INTO user_totp (user_id, secret) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = now(), last_step = NULL
       WHERE user_totp.confirmed_at IS NULL
     RETURNING user_id`,
    [userId, secret],
  );
  return rows.length > 0;
}

/**
 * Records `step` as used when it is later than the last one used: one statement, so two requests
 * with the same code cannot both pass. False when the step (or a later one) was used already.
 */
export async function useTotpStep(db: Queryable, userId: string, step: number, confirm: boolean) {
  const rows = await db.query<{ user_id: string }>(
    `UPDATE user_totp SET last_step = $2, confirmed_at = CASE WHEN $3::boolean THEN coalesce(confirmed_at, now()) ELSE confirmed_at END
     WHERE user_id = $1 AND (last_step IS NULL OR last_step < $2) RETURNING user_id`,
    [userId, step, confirm],
  );
  return rows.length > 0;
}

export async function deleteTotp(db: Queryable, userId: string) {
  await db.query('DELETE FROM user_totp WHERE user_id = $1', [userId]);
  await db.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
}

export async function replaceRecoveryCodes(db: Queryable, userId: string, hashes: string[]) {
  await db.query('DELETE FROM user_recovery_codes WHERE user_id = $1', [userId]);
  for (const hash of hashes) await db.query('INSERT INTO user_recovery_codes (user_id, code_hash) VALUES ($1, $2)', [userId, hash]);
}

/** Spends a recovery code; false when it is not theirs or was spent already. */
export async function useRecoveryCode(db: Queryable, userId: string, hash: string) {
  const rows = await db.query<{ user_id: string }>(
    'UPDATE user_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING user_id',
    [userId, hash],
  );
  return rows.length > 0;
}

export async function countRecoveryCodesLeft(db: Queryable, userId: string) {
  return Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM user_recovery_codes WHERE user_id = $1 AND used_at IS NULL', [userId]))[0]?.n ?? 0);
}

export async function accountRequiresTwoFactors(db: Queryable, accountId: string) {
  return (await db.query<{ r: boolean }>('SELECT require_two_factors AS r FROM accounts WHERE id = $1', [accountId]))[0]?.r === true;
}

export async function setAccountRequiresTwoFactors(db: Queryable, accountId: string, required: boolean) {
  await db.query('UPDATE accounts SET require_two_factors = $2 WHERE id = $1', [accountId, required]);
}

/** Moves a session to another stage, under a new cookie id and CSRF token (the old id stops working). */
export async function advanceSession(db: Queryable, oldIdHash: string, next: { idHash: string; csrfToken: string; stage: string; expiresAt: Date }) {
  const rows = await db.query<{ id: string }>(
    'UPDATE web_sessions SET id_hash = $2, csrf_token = $3, stage = $4, expires_at = $5, last_seen_at = now() WHERE id_hash = $1 RETURNING id',
    [oldIdHash, next.idHash, next.csrfToken, next.stage, next.expiresAt],
  );
  return rows.length > 0;
}
