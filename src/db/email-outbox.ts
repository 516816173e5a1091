// The email outbox (migration 0029): messages written with the change they tell about, sent by a job.
import type { Queryable } from './database.ts';

export interface OutboxRow {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: Date;
  sent_at: Date | null;
}

export async function insertOutboxMessage(db: Queryable, m: { id: string; kind: string; recipient: string; subject: string; text: string; html: string }) {
  await db.query(
    'INSERT INTO email_outbox (id, kind, recipient, subject, text_body, html_body) VALUES ($1, $2, $3, $4, $5, $6)',
    [m.id, m.kind, m.recipient, m.subject, m.text, m.html],
  );
}

export async function findOutboxMessage(db: Queryable, id: string) {
  return (await db.query<OutboxRow>('SELECT * FROM email_outbox WHERE id = $1', [id]))[0];
}

/**
 * Marks a message sent and drops its bodies: they carry a one-time link's secret, which the
 * database keeps only as a hash (email_links); the row stays as a record of what was sent to whom.
 */
export async function markOutboxMessageSent(db: Queryable, id: string) {
  await db.query(
    `UPDATE email_outbox SET sent_at = coalesce(sent_at, now()), text_body = $2, html_body = $2 WHERE id = $1`,
    [id, SENT_BODY],
  );
}

/** What a sent message's bodies read afterwards. */
export const SENT_BODY = '(sent; its body is not kept, since it carried a one-time link)';

/** The newest messages first, optionally to one recipient. */
export async function listOutboxMessages(db: Queryable, filter: { recipient?: string; limit: number }) {
  return db.query<OutboxRow>(
    `SELECT * FROM email_outbox WHERE ($1::text IS NULL OR recipient = $1) ORDER BY created_at DESC, id DESC LIMIT $2`,
    [filter.recipient ?? null, filter.limit],
  );
}

/** Whether a message of `kind` went to `recipient` within the last `withinSeconds`. */
export async function sentRecently(db: Queryable, recipient: string, kind: string, withinSeconds: number) {
  const rows = await db.query(
    `SELECT 1 FROM email_outbox WHERE recipient = $1 AND kind = $2 AND created_at > now() - make_interval(secs => $3) LIMIT 1`,
    [recipient, kind, withinSeconds],
  );
  return rows.length > 0;
}

/** Deletes messages older than `olderThanDays`, sent or not (the cleanup, mail/outbox-janitor.ts); answers how many. */
export async function deleteOldOutboxMessages(db: Queryable, olderThanDays: number, limit: number) {
  return (
    await db.query(
      `DELETE FROM email_outbox WHERE id IN (
         SELECT id FROM email_outbox WHERE created_at < now() - make_interval(days => $1) ORDER BY created_at LIMIT $2
       ) RETURNING id`,
      [olderThanDays, limit],
    )
  ).length;
}
