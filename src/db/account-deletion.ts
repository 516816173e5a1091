// Deleting an account (issue #45): its people and their personal data go at once; the account's
// row goes with them, or, while its nodes are still being destroyed, once they are. What stays
// for the operator has no foreign key to the account: the audit trail (migration 0030) and the
// usage records (node_status_changes, api_call_counts, api_call_totals, usage_closed_months).
import type { Queryable } from './database.ts';

/** The account's nodes that are neither being nor already destroyed. */
export async function listLiveNodeIds(db: Queryable, accountId: string) {
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM nodes WHERE user_id = $1 AND status NOT IN ('DESTROYING', 'DESTROYED') ORDER BY created_at, id`,
    [accountId],
  );
  return rows.map((r) => r.id);
}

/** The account's nodes whose destruction has not finished. */
export async function listUndestroyedNodeIds(db: Queryable, accountId: string) {
  const rows = await db.query<{ id: string }>(`SELECT id FROM nodes WHERE user_id = $1 AND status <> 'DESTROYED' ORDER BY created_at, id`, [accountId]);
  return rows.map((r) => r.id);
}

/**
 * Deletes every member's user (their tokens, web sessions, an ownership offer), every client
 * certificate of the account, the account's invitations (emails) and its nodes' settings (webhook URLs).
 * Returns the ids of the users deleted.
 */
export async function deleteAccountPeople(db: Queryable, accountId: string) {
  await db.query('DELETE FROM account_invitations WHERE account_id = $1', [accountId]);
  // Those from before accounts record no issuer: they would not go with any user.
  await db.query('DELETE FROM client_certificates WHERE user_id = $1', [accountId]);
  await db.query(`UPDATE nodes SET settings = '{}' WHERE user_id = $1`, [accountId]);
  const rows = await db.query<{ id: string }>(
    'DELETE FROM users WHERE id IN (SELECT user_id FROM account_members WHERE account_id = $1) RETURNING id',
    [accountId],
  );
  return rows.map((r) => r.id);
}

/** The account's row, and with it (ON DELETE CASCADE) its nodes' records, backups, log exports, certificates and events. */
export async function deleteAccountRow(db: Queryable, accountId: string) {
  await db.query('DELETE FROM accounts WHERE id = $1', [accountId]);
}

export async function markAccountDeleted(db: Queryable, accountId: string) {
  await db.query('UPDATE accounts SET deleted_at = now() WHERE id = $1', [accountId]);
}

/** Deletes the rows of deleted accounts whose every node is now DESTROYED; returns how many. */
export async function purgeDeletedAccounts(db: Queryable) {
  const rows = await db.query<{ id: string }>(
    `DELETE FROM accounts a WHERE a.deleted_at IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.user_id = a.id AND n.status <> 'DESTROYED')
     RETURNING a.id`,
  );
  return rows.length;
}
