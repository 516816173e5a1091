// One-time email links (verification, password reset; migration 0029): only the secret's hash is stored.
import type { Queryable } from './database.ts';

export type LinkPurpose = 'verify' | 'reset';

export interface EmailLinkRow {
  token_hash: string;
  purpose: LinkPurpose;
  user_id: string;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertEmailLink(db: Queryable, l: { tokenHash: string; purpose: LinkPurpose; userId: string; ttlSeconds: number }) {
  await db.query(
    `INSERT INTO email_links (token_hash, purpose, user_id, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [l.tokenHash, l.purpose, l.userId, l.ttlSeconds],
  );
}

/**
 * Uses a link: marks it used and returns its person when it exists for this purpose, is unused
 * and has not expired; undefined otherwise. One statement, so of two uses racing, one wins.
 */
export async function consumeEmailLink(db: Queryable, tokenHash: string, purpose: LinkPurpose) {
  return (
    await db.query<EmailLinkRow>(
      `UPDATE email_links SET used_at = now()
       WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now() RETURNING *`,
      [tokenHash, purpose],
    )
  )[0];
}

/** Ends the person's other unused links of this purpose (a newer one was sent, or one was used). */
export async function expireEmailLinks(db: Queryable, userId: string, purpose: LinkPurpose) {
  await db.query(`UPDATE email_links SET expires_at = least(expires_at, now()) WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL`, [userId, purpose]);
}

/** A link that would work now (exists for this purpose, unused, unexpired), without using it. */
export async function findLiveEmailLink(db: Queryable, tokenHash: string, purpose: LinkPurpose) {
  return (
    await db.query<EmailLinkRow>(`SELECT * FROM email_links WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`, [tokenHash, purpose])
  )[0];
}

/**
 * Deletes links that can no longer be used (used, or expired) for `graceHours` (the cleanup,
 * mail/outbox-janitor.ts); answers how many. Either way the link answers the same invalid_link.
 */
export async function deleteDeadEmailLinks(db: Queryable, graceHours: number, limit: number) {
  return (
    await db.query(
      `DELETE FROM email_links WHERE token_hash IN (
         SELECT token_hash FROM email_links
         WHERE least(used_at, expires_at) < now() - make_interval(hours => $1) LIMIT $2
       ) RETURNING token_hash`,
      [graceHours, limit],
    )
  ).length;
}
