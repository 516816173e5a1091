// The node pubkey each node's daemon reported after its last unlock (nodes.node_pubkey, migration
// 0018): how the service notices two live nodes running one wallet (nodes/unlock/node-identity.ts).
import type { Queryable } from './database.ts';

export interface NodeSharingPubkey {
  id: string;
  user_id: string;
}

/**
 * Records `pubkey` as the node's and answers the other live (not destroyed) nodes that reported
 * the same one, oldest first.
 */
export async function recordNodePubkey(db: Queryable, nodeId: string, pubkey: string): Promise<NodeSharingPubkey[]> {
  await db.query('UPDATE nodes SET node_pubkey = $2 WHERE id = $1 AND node_pubkey IS DISTINCT FROM $2', [nodeId, pubkey]);
  return db.query<NodeSharingPubkey>(
    `SELECT id, user_id FROM nodes WHERE node_pubkey = $1 AND id <> $2 AND status <> 'DESTROYED' ORDER BY created_at, id`,
    [pubkey, nodeId],
  );
}
