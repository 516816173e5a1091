// Idempotency keys of node creation: the first answer to a key, kept for a day. What is kept is
// the answer's body; how it travels (its HTTP status) is the API's business.
import type { Queryable } from './database.ts';
import { jsonParam } from './storable-text.ts';

export const IDEMPOTENCY_KEY_TTL_HOURS = 24;

export interface StoredAnswer {
  request_hash: string;
  response_body: unknown;
}

/**
 * Claims a key for this transaction's request. Returns undefined when the key is new (the caller
 * goes on and calls saveIdempotentAnswer), else the answer stored for it. A concurrent request with
 * the same key waits here on PostgreSQL until the first one commits or rolls back.
 */
export async function claimIdempotencyKey(db: Queryable, userId: string, key: string, requestHash: string) {
  await db.query(
    `DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND created_at < now() - make_interval(hours => $3)`,
    [userId, key, IDEMPOTENCY_KEY_TTL_HOURS],
  );
  const claimed = await db.query(
    `INSERT INTO idempotency_keys (user_id, key, request_hash, response_body)
     VALUES ($1, $2, $3, 'null') ON CONFLICT (user_id, key) DO NOTHING RETURNING key`,
    [userId, key, requestHash],
  );
  if (claimed.length > 0) return undefined;
  return (
    await db.query<StoredAnswer>(
      'SELECT request_hash, response_body FROM idempotency_keys WHERE user_id = $1 AND key = $2',
      [userId, key],
    )
  )[0];
}

export async function saveIdempotentAnswer(db: Queryable, userId: string, key: string, body: unknown) {
  await db.query('UPDATE idempotency_keys SET response_body = $3 WHERE user_id = $1 AND key = $2', [userId, key, jsonParam(body)]);
}

export async function purgeExpiredIdempotencyKeys(db: Queryable) {
  await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [IDEMPOTENCY_KEY_TTL_HOURS]);
}
