// OpenID Connect identities and sign-ins under way (migration 0031).
import type { Queryable } from './database.ts';

export interface OidcIdentityRow {
  issuer: string;
  subject: string;
  user_id: string;
  provider: string;
  email: string | null;
  created_at: Date;
}

export interface OidcLoginRow {
  provider: string;
  nonce: string;
  code_verifier: string;
  link_user_id: string | null;
}

export async function insertOidcLogin(db: Queryable, l: { stateHash: string; provider: string; nonce: string; codeVerifier: string; linkUserId: string | null; ttlSeconds: number }) {
  await db.query('DELETE FROM oidc_logins WHERE expires_at < now()');
  await db.query(
    `INSERT INTO oidc_logins (state_hash, provider, nonce, code_verifier, link_user_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [l.stateHash, l.provider, l.nonce, l.codeVerifier, l.linkUserId, l.ttlSeconds],
  );
}

/** The live sign-in of this state, deleted as it is read: a second callback with it finds nothing. */
export async function takeOidcLogin(db: Queryable, stateHash: string) {
  return (
    await db.query<OidcLoginRow>(
      `DELETE FROM oidc_logins WHERE state_hash = $1 AND expires_at > now() RETURNING provider, nonce, code_verifier, link_user_id`,
      [stateHash],
    )
  )[0];
}

export async function findOidcIdentity(db: Queryable, issuer: string, subject: string) {
  return (await db.query<OidcIdentityRow>('SELECT * FROM oidc_identities WHERE issuer = $1 AND subject = $2', [issuer, subject]))[0];
}

/** False when the identity already belongs to someone. */
export async function insertOidcIdentity(db: Queryable, i: { issuer: string; subject: string; userId: string; provider: string; email: string | null }) {
  const rows = await db.query(
    `INSERT INTO oidc_identities (issuer, subject, user_id, provider, email) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (issuer, subject) DO NOTHING RETURNING issuer`,
    [i.issuer, i.subject, i.userId, i.provider, i.email],
  );
  return rows.length > 0;
}

export async function listOidcIdentities(db: Queryable, userId: string) {
  return db.query<OidcIdentityRow>('SELECT * FROM oidc_identities WHERE user_id = $1 ORDER BY created_at, provider', [userId]);
}

export async function deleteOidcIdentities(db: Queryable, userId: string, provider: string) {
  return (await db.query('DELETE FROM oidc_identities WHERE user_id = $1 AND provider = $2 RETURNING issuer', [userId, provider])).length;
}
