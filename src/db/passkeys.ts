// Passkeys (migration 0037): a person's WebAuthn credentials, and the challenges handed out for
// enrolling or using one (each used once).
import type { Queryable } from './database.ts';
import type { StoredPasskey } from '../domain/passkey.ts';

interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: string | number;
  transports: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = 'id, user_id, credential_id, public_key, counter, transports, name, created_at, last_used_at';

const passkeyFromRow = (r: PasskeyRow): StoredPasskey => ({
  id: r.id,
  userId: r.user_id,
  credentialId: r.credential_id,
  publicKey: r.public_key,
  counter: Number(r.counter),
  transports: r.transports ? r.transports.split(',') : [],
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export async function listPasskeys(db: Queryable, userId: string): Promise<StoredPasskey[]> {
  return (await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM user_passkeys WHERE user_id = $1 ORDER BY created_at, id`, [userId])).map(passkeyFromRow);
}

export async function countPasskeys(db: Queryable, userId: string) {
  return Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM user_passkeys WHERE user_id = $1', [userId]))[0]?.n ?? 0);
}

/** The passkey with this credential id, whoever's it is. */
export async function findPasskeyByCredential(db: Queryable, credentialId: string): Promise<StoredPasskey | undefined> {
  const [row] = await db.query<PasskeyRow>(`SELECT ${COLUMNS} FROM user_passkeys WHERE credential_id = $1`, [credentialId]);
  return row && passkeyFromRow(row);
}

/** False when the credential is enrolled already (by this person or anyone). */
export async function insertPasskey(
  db: Queryable,
  p: { id: string; userId: string; credentialId: string; publicKey: string; counter: number; transports: string[]; name: string },
) {
  const rows = await db.query<{ id: string }>(
    `INSERT INTO user_passkeys (id, user_id, credential_id, public_key, counter, transports, name) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (credential_id) DO NOTHING RETURNING id`,
    [p.id, p.userId, p.credentialId, p.publicKey, p.counter, p.transports.join(','), p.name],
  );
  return rows.length > 0;
}

/**
 * Records a use: the counter moves to `counter` only forward (or stays 0 for an authenticator that
 * keeps none), in one statement so two requests with the same assertion cannot both pass.
 */
export async function recordPasskeyUse(db: Queryable, id: string, previous: number, counter: number) {
  const rows = await db.query<{ id: string }>(
    `UPDATE user_passkeys SET counter = $3, last_used_at = now()
     WHERE id = $1 AND counter = $2 AND ($3 > counter OR ($3 = 0 AND counter = 0)) RETURNING id`,
    [id, previous, counter],
  );
  return rows.length > 0;
}

export async function renamePasskey(db: Queryable, userId: string, id: string, name: string): Promise<StoredPasskey | undefined> {
  const [row] = await db.query<PasskeyRow>(`UPDATE user_passkeys SET name = $3 WHERE user_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [userId, id, name]);
  return row && passkeyFromRow(row);
}

export async function deletePasskey(db: Queryable, userId: string, id: string) {
  return (await db.query<{ id: string }>('DELETE FROM user_passkeys WHERE user_id = $1 AND id = $2 RETURNING id', [userId, id])).length > 0;
}

export async function deleteUserPasskeys(db: Queryable, userId: string) {
  return (await db.query<{ id: string }>('DELETE FROM user_passkeys WHERE user_id = $1 RETURNING id', [userId])).length;
}

export type ChallengePurpose = 'register' | 'assert' | 'sign_in';

export async function insertChallenge(
  db: Queryable,
  c: { challenge: string; purpose: ChallengePurpose; browserKey: string; userId: string | null; address: string | null; expiresAt: Date },
) {
  // Handing one out is a good moment to forget those that expired.
  await db.query('DELETE FROM webauthn_challenges WHERE expires_at < now()');
  await db.query('INSERT INTO webauthn_challenges (challenge, purpose, browser_key, user_id, address, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    c.challenge,
    c.purpose,
    c.browserKey,
    c.userId,
    c.address,
    c.expiresAt,
  ]);
}

/** How many unexpired challenges of `purpose` the client address holds. */
export async function countLiveChallenges(db: Queryable, address: string, purpose: ChallengePurpose) {
  const rows = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM webauthn_challenges WHERE address = $1 AND purpose = $2 AND expires_at > now()',
    [address, purpose],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Spends a challenge handed to this browser for this purpose (and person, when there is one);
 * false when it is unknown, spent, expired or someone else's. Spent whatever the answer's fate.
 */
export async function takeChallenge(db: Queryable, c: { challenge: string; purpose: ChallengePurpose; browserKey: string; userId: string | null }) {
  const rows = await db.query<{ challenge: string }>(
    `DELETE FROM webauthn_challenges WHERE challenge = $1 AND purpose = $2 AND browser_key = $3
       AND user_id IS NOT DISTINCT FROM $4 AND expires_at > now() RETURNING challenge`,
    [c.challenge, c.purpose, c.browserKey, c.userId],
  );
  return rows.length > 0;
}
