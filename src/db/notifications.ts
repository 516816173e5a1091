// Notification emails (migration 0036): who turned which kind off, which events were notified
// already, and what a notice about a node event needs to say.
import type { Queryable } from './database.ts';

/** The kinds a person has turned off. */
export async function listNotificationOptOuts(db: Queryable, userId: string): Promise<string[]> {
  return (await db.query<{ kind: string }>('SELECT kind FROM notification_opt_outs WHERE user_id = $1 ORDER BY kind', [userId])).map((r) => r.kind);
}

/** Turns each kind on (no row) or off (a row), as `enabled` says; kinds it does not name stay as they are. */
export async function setNotificationOptOuts(db: Queryable, userId: string, enabled: Record<string, boolean>) {
  const kinds = Object.keys(enabled);
  await db.query(
    `DELETE FROM notification_opt_outs WHERE user_id = $1 AND kind = ANY($2::text[])`,
    [userId, kinds.filter((k) => enabled[k])],
  );
  await db.query(
    `INSERT INTO notification_opt_outs (user_id, kind) SELECT $1, k FROM unnest($2::text[]) AS k ON CONFLICT DO NOTHING`,
    [userId, kinds.filter((k) => !enabled[k])],
  );
}

/**
 * Records that the event of `key` is being notified; false when it was already. Called in the
 * transaction that writes its emails, so of two attempts (a retried job, two replicas) one writes them.
 */
export async function claimNotification(db: Queryable, key: string): Promise<boolean> {
  return (await db.query('INSERT INTO notifications_sent (key) VALUES ($1) ON CONFLICT DO NOTHING RETURNING key', [key])).length > 0;
}

/**
 * The addresses a notice of `kind` about the account goes to: its owner and admins whose address is
 * verified and who have not turned the kind off. None for a deleted account or one awaiting approval.
 */
export async function findNotificationRecipients(db: Queryable, accountId: string, kind: string): Promise<string[]> {
  const rows = await db.query<{ email: string }>(
    `SELECT u.email FROM account_members m
     JOIN users u ON u.id = m.user_id
     JOIN accounts a ON a.id = m.account_id
     WHERE m.account_id = $1 AND m.role IN ('owner', 'admin') AND u.email_verified_at IS NOT NULL
       AND a.deleted_at IS NULL AND a.awaiting_approval_since IS NULL
       AND NOT EXISTS (SELECT 1 FROM notification_opt_outs o WHERE o.user_id = u.id AND o.kind = $2)
     ORDER BY u.email`,
    [accountId, kind],
  );
  return rows.map((r) => r.email);
}

export interface NoticeEventRow {
  account_id: string;
  node_id: string;
  node_name: string;
  event_type: string;
  details: Record<string, unknown>;
}

/** A node event with its node's name, for its notice; undefined once the node (and its events) are gone. */
export async function findNoticeEvent(db: Queryable, eventId: number): Promise<NoticeEventRow | undefined> {
  return (
    await db.query<NoticeEventRow>(
      `SELECT e.user_id AS account_id, e.node_id, n.name AS node_name, e.event_type, e.payload -> 'details' AS details
       FROM node_events e JOIN nodes n ON n.id = e.node_id WHERE e.id = $1`,
      [eventId],
    )
  )[0];
}

/** Forgets notified events older than `olderThanDays` (the cleanup job); a month's API call notices must outlive their month. */
export async function deleteOldNotificationKeys(db: Queryable, olderThanDays: number): Promise<number> {
  return (await db.query(`DELETE FROM notifications_sent WHERE created_at < now() - make_interval(days => $1) RETURNING key`, [olderThanDays])).length;
}
