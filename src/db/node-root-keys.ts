// node_root_keys (migration 0039): each node's Biscuit root key, its private half sealed.
import type { Queryable } from './database.ts';

export interface NodeRootKeyRow {
  node_id: string;
  public_key: string;
  sealed_private_key: string;
}

export async function findNodeRootKey(db: Queryable, nodeId: string): Promise<NodeRootKeyRow | undefined> {
  const rows = await db.query<NodeRootKeyRow>('SELECT node_id, public_key, sealed_private_key FROM node_root_keys WHERE node_id = $1', [nodeId]);
  return rows[0];
}

/** Stores a node's key unless it has one already (two creations at once keep the first). */
export async function insertNodeRootKey(db: Queryable, row: NodeRootKeyRow): Promise<void> {
  await db.query(
    'INSERT INTO node_root_keys (node_id, public_key, sealed_private_key) VALUES ($1, $2, $3) ON CONFLICT (node_id) DO NOTHING',
    [row.node_id, row.public_key, row.sealed_private_key],
  );
}

export async function listSealedNodeRootKeys(db: Queryable): Promise<Array<{ node_id: string; sealed_private_key: string }>> {
  return db.query('SELECT node_id, sealed_private_key FROM node_root_keys');
}

/** Replaces a sealed key unless it changed meanwhile (another rotation). */
export async function replaceSealedNodeRootKey(db: Queryable, nodeId: string, from: string, to: string): Promise<void> {
  await db.query('UPDATE node_root_keys SET sealed_private_key = $3 WHERE node_id = $1 AND sealed_private_key = $2', [nodeId, from, to]);
}
