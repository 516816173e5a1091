// Restores into new nodes: which backup a node is created from, and its sealed password until the
// restore ends.
import type { Queryable } from './database.ts';

export interface NodeRestoreRow {
  node_id: string;
  backup_id: string;
  sealed_password: string | null;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function insertNodeRestore(db: Queryable, r: { nodeId: string; backupId: string; sealedPassword: string }) {
  await db.query(
    `INSERT INTO node_restores (node_id, backup_id, sealed_password, status) VALUES ($1, $2, $3, 'PENDING')`,
    [r.nodeId, r.backupId, r.sealedPassword],
  );
}

export async function findNodeRestore(db: Queryable, nodeId: string) {
  return (await db.query<NodeRestoreRow>('SELECT * FROM node_restores WHERE node_id = $1', [nodeId]))[0];
}

/** Ends a pending restore and erases its sealed password; false when it had ended already. */
export async function finishNodeRestore(db: Queryable, nodeId: string, outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; error: string }) {
  const rows = await db.query(
    `UPDATE node_restores SET status = $2, error = $3, sealed_password = NULL, finished_at = now()
     WHERE node_id = $1 AND status = 'PENDING' RETURNING node_id`,
    [nodeId, outcome.status, outcome.status === 'FAILED' ? outcome.error : null],
  );
  return rows.length > 0;
}

/** The sealed passwords of restores in flight, for a rotation of the seal key. */
export async function listSealedRestorePasswords(db: Queryable) {
  return db.query<{ node_id: string; sealed_password: string }>(
    `SELECT node_id, sealed_password FROM node_restores WHERE status = 'PENDING' AND sealed_password IS NOT NULL`,
  );
}

/** Replaces a sealed password unless it changed meanwhile (the restore ended, or another rotation). */
export async function replaceSealedRestorePassword(db: Queryable, nodeId: string, from: string, to: string) {
  await db.query('UPDATE node_restores SET sealed_password = $3 WHERE node_id = $1 AND sealed_password = $2', [nodeId, from, to]);
}
