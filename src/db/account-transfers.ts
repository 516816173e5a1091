// An owner's offer of their account to one of its admins (migration 0030), and the swap of roles
// that carries it out. One offer per account; it goes with the admin's user.
import type { Queryable } from './database.ts';

export interface TransferRow {
  account_id: string;
  to_user_id: string;
  to_email: string;
  offered_by: string;
  created_at: Date;
  expires_at: Date;
}

const TRANSFER_SELECT = `SELECT t.account_id, t.to_user_id, u.email AS to_email, t.offered_by, t.created_at, t.expires_at
  FROM account_transfers t JOIN users u ON u.id = t.to_user_id`;

/** Makes the account's offer (replacing an earlier one). */
export async function upsertTransfer(db: Queryable, t: { accountId: string; toUserId: string; offeredBy: string; expiresAt: Date }) {
  await db.query(
    `INSERT INTO account_transfers (account_id, to_user_id, offered_by, expires_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id) DO UPDATE SET to_user_id = $2, offered_by = $3, created_at = now(), expires_at = $4`,
    [t.accountId, t.toUserId, t.offeredBy, t.expiresAt],
  );
}

/** The account's offer while it can still be accepted. */
export async function findLiveTransfer(db: Queryable, accountId: string) {
  return (await db.query<TransferRow>(`${TRANSFER_SELECT} WHERE t.account_id = $1 AND t.expires_at > now()`, [accountId]))[0];
}

/** Withdraws (or uses up) the account's offer; false when it had none. */
export async function deleteTransfer(db: Queryable, accountId: string) {
  return (await db.query<{ account_id: string }>('DELETE FROM account_transfers WHERE account_id = $1 RETURNING account_id', [accountId])).length > 0;
}

/** The owner becomes an admin and the admin the owner, in one statement: the account never has two owners or none. */
export async function swapOwner(db: Queryable, accountId: string, fromUserId: string, toUserId: string) {
  await db.query(
    `UPDATE account_members SET role = CASE WHEN user_id = $2 THEN 'admin' ELSE 'owner' END
     WHERE account_id = $1 AND user_id IN ($2, $3)`,
    [accountId, fromUserId, toUserId],
  );
}
