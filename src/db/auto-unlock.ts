// The sealed passwords of nodes with automatic unlock (nodes.auto_unlock_sealed). Setting and
// clearing one is a node change (updateNode, through the lifecycle table); these are the queries
// a key rotation needs: every sealed value, and a replacement that loses to any change made since.
import type { Queryable } from './database.ts';

export async function listSealedAutoUnlockPasswords(db: Queryable) {
  return db.query<{ id: string; auto_unlock_sealed: string }>(
    'SELECT id, auto_unlock_sealed FROM nodes WHERE auto_unlock_sealed IS NOT NULL ORDER BY id',
  );
}

/** Replaces the node's sealed password with `to` only while it is still `from`. */
export async function replaceSealedAutoUnlockPassword(db: Queryable, nodeId: string, from: string, to: string) {
  await db.query('UPDATE nodes SET auto_unlock_sealed = $3 WHERE id = $1 AND auto_unlock_sealed = $2', [nodeId, from, to]);
}
