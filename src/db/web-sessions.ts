// Web UI sessions and failed sign-in counters.
import type { Queryable } from './database.ts';
import { MEMBER_COLUMNS, MEMBER_JOIN, type MemberRow } from './users.ts';

export interface SessionUserRow extends MemberRow {
  csrf_token: string;
  last_seen_at: Date;
  expires_at: Date;
  /** 'full', 'second_factor' or 'enrol' (migration 0032). */
  stage: string;
}

export interface SessionRow {
  id: string;
  id_hash: string;
  user_agent: string | null;
  address: string | null;
  created_at: Date;
  last_seen_at: Date;
}

export async function insertSession(
  db: Queryable,
  s: {
    id: string;
    idHash: string;
    userId: string;
    csrfToken: string;
    expiresAt: Date;
    userAgent: string | null;
    address: string;
    stage?: string;
    signedInWith?: string;
  },
) {
  await db.query(
    'INSERT INTO web_sessions (id, id_hash, user_id, csrf_token, expires_at, user_agent, address, stage, signed_in_with) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
    [s.id, s.idHash, s.userId, s.csrfToken, s.expiresAt, s.userAgent, s.address, s.stage ?? 'full', s.signedInWith ?? null],
  );
}

/** A user's live sessions, the most recently seen first. */
export async function listUserSessions(db: Queryable, userId: string) {
  return db.query<SessionRow>(
    `SELECT id, id_hash, user_agent, address, created_at, last_seen_at FROM web_sessions
     WHERE user_id = $1 AND expires_at > now() AND stage = 'full' ORDER BY last_seen_at DESC, id`,
    [userId],
  );
}

/** Ends one of the user's sessions by its public id; false when they have no such session. */
export async function deleteUserSession(db: Queryable, userId: string, id: string) {
  return (await db.query<{ id: string }>('DELETE FROM web_sessions WHERE user_id = $1 AND id = $2 RETURNING id', [userId, id])).length > 0;
}

/** Ends every session of the user but the one whose hash is `keepIdHash` (none kept when undefined); returns how many. */
export async function deleteOtherUserSessions(db: Queryable, userId: string, keepIdHash: string | undefined) {
  const rows = await db.query<{ id: string }>('DELETE FROM web_sessions WHERE user_id = $1 AND id_hash IS DISTINCT FROM $2 RETURNING id', [
    userId,
    keepIdHash ?? null,
  ]);
  return rows.length;
}

/** The user of a live (not expired) session, with the session's CSRF token. */
export async function findSessionUser(db: Queryable, idHash: string) {
  return (
    await db.query<SessionUserRow>(
      `SELECT ${MEMBER_COLUMNS}, s.csrf_token, s.last_seen_at, s.expires_at, s.stage FROM web_sessions s JOIN users u ON u.id = s.user_id ${MEMBER_JOIN}
       WHERE s.id_hash = $1 AND s.expires_at > now()`,
      [idHash],
    )
  )[0];
}

/** Whether the session signed in with `method` less than `seconds` ago (migration 0037). */
export async function sessionSignedInWithSince(db: Queryable, idHash: string, method: string, seconds: number) {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM web_sessions WHERE id_hash = $1 AND expires_at > now() AND signed_in_with = $2
       AND created_at > now() - make_interval(secs => $3)`,
    [idHash, method, seconds],
  );
  return rows.length > 0;
}

/** Slides the idle expiry forward, never past the absolute limit fixed at creation. */
export async function touchSession(db: Queryable, idHash: string, expiresAt: Date, absoluteSeconds: number) {
  await db.query(
    'UPDATE web_sessions SET last_seen_at = now(), expires_at = least($2, created_at + make_interval(secs => $3)) WHERE id_hash = $1',
    [idHash, expiresAt, absoluteSeconds],
  );
}

export async function deleteSession(db: Queryable, idHash: string) {
  await db.query('DELETE FROM web_sessions WHERE id_hash = $1', [idHash]);
}

export async function deleteExpiredSessions(db: Queryable) {
  await db.query('DELETE FROM web_sessions WHERE expires_at <= now()');
}

/** The failures counted for `key` in the window that is still open, 0 when none. */
export async function countSignInFailures(db: Queryable, key: string, windowSeconds: number) {
  const row = (
    await db.query<{ failures: number; retry_after: number }>(
      `SELECT failures, ceil(extract(epoch FROM (window_started_at + make_interval(secs => $2) - now())))::int AS retry_after
       FROM sign_in_failures WHERE key = $1 AND window_started_at > now() - make_interval(secs => $2)`,
      [key, windowSeconds],
    )
  )[0];
  return row ? { failures: row.failures, retryAfterSeconds: Math.max(1, row.retry_after) } : { failures: 0, retryAfterSeconds: 0 };
}

/** Counts one failure; a window that has ended starts over. */
export async function recordSignInFailure(db: Queryable, key: string, windowSeconds: number) {
  await db.query(
    `INSERT INTO sign_in_failures (key, failures, window_started_at) VALUES ($1, 1, now())
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN sign_in_failures.window_started_at > now() - make_interval(secs => $2) THEN sign_in_failures.failures + 1 ELSE 1 END,
       window_started_at = CASE WHEN sign_in_failures.window_started_at > now() - make_interval(secs => $2) THEN sign_in_failures.window_started_at ELSE now() END`,
    [key, windowSeconds],
  );
}

export async function clearSignInFailures(db: Queryable, key: string) {
  await db.query('DELETE FROM sign_in_failures WHERE key = $1', [key]);
}
