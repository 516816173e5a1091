// Backups: what a user backed up (or uploaded to restore from), where its file is once finished,
// and, while one runs, which replica runs it.
import type { Queryable } from './database.ts';
import type { Network } from '../domain/nodes.ts';

export type BackupStatus = 'IN_PROGRESS' | 'SUCCEEDED' | 'FAILED';

export interface BackupRow {
  id: string;
  user_id: string;
  node_id: string | null;
  origin: 'node' | 'upload';
  status: BackupStatus;
  network: Network | null;
  image_version: string | null;
  was_unlocked: boolean;
  runner: string | null;
  heartbeat_at: Date;
  blob_key: string | null;
  size_bytes: string | number | null;
  sha256: string | null;
  error_code: string | null;
  error_message: string | null;
  unlock_error: string | null;
  /** An upload recognised as one of the user's node backups: that node, and when it wrote the file. */
  source_node_id: string | null;
  source_made_at: Date | null;
  /** The final backup of an export (backups/export.ts): kept BACKUP_EXPORT_RETENTION_DAYS, and its wallet never restored here. */
  for_export: boolean;
  created_at: Date;
  finished_at: Date | null;
}

export async function insertNodeBackup(
  db: Queryable,
  b: { id: string; userId: string; nodeId: string; network: string; imageVersion: string; wasUnlocked: boolean; runner: string; forExport?: boolean },
) {
  return (
    await db.query<BackupRow>(
      `INSERT INTO backups (id, user_id, node_id, origin, status, network, image_version, was_unlocked, runner, for_export)
       VALUES ($1, $2, $3, 'node', 'IN_PROGRESS', $4, $5, $6, $7, $8) RETURNING *`,
      [b.id, b.userId, b.nodeId, b.network, b.imageVersion, b.wasUnlocked, b.runner, b.forExport ?? false],
    )
  )[0]!;
}

/**
 * An uploaded file, recorded once it is whole in the blob store, with the network it is for and, when
 * the service recognised it as one of the user's node backups, that node and when it wrote the file.
 */
export async function insertUploadedBackup(
  db: Queryable,
  b: { id: string; userId: string; blobKey: string; sizeBytes: number; sha256: string; network: string | null; sourceNodeId: string | null; sourceMadeAt: Date | null; imageVersion: string | null },
) {
  return (
    await db.query<BackupRow>(
      `INSERT INTO backups (id, user_id, origin, status, blob_key, size_bytes, sha256, network, source_node_id, source_made_at, image_version, finished_at)
       VALUES ($1, $2, 'upload', 'SUCCEEDED', $3, $4, $5, $6, $7, $8, $9, now()) RETURNING *`,
      [b.id, b.userId, b.blobKey, b.sizeBytes, b.sha256, b.network, b.sourceNodeId, b.sourceMadeAt, b.imageVersion],
    )
  )[0]!;
}

/** One of the user's successful node backups whose file has this SHA-256: what an upload of that file is. */
export async function findUserNodeBackupBySha256(db: Queryable, userId: string, sha256: string) {
  return (
    await db.query<BackupRow>(
      `SELECT * FROM backups WHERE user_id = $1 AND sha256 = $2 AND origin = 'node' AND status = 'SUCCEEDED' ORDER BY created_at LIMIT 1`,
      [userId, sha256],
    )
  )[0];
}

/**
 * What the user's uploads hold now. With `lock`, the user's row is locked first, so two uploads
 * of one user are counted against the quota one after the other.
 */
export async function userUploadUsage(db: Queryable, userId: string, lock = false) {
  if (lock) await db.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
  const [row] = await db.query<{ count: string | number; bytes: string | number }>(
    `SELECT count(*) AS count, coalesce(sum(size_bytes), 0) AS bytes FROM backups WHERE user_id = $1 AND origin = 'upload'`,
    [userId],
  );
  return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** One page of the user's uploads, newest first; `before` is the last one of the previous page. */
export async function listUserUploads(db: Queryable, userId: string, limit: number, before?: BackupRow) {
  return before
    ? db.query<BackupRow>(
        `SELECT * FROM backups WHERE user_id = $1 AND origin = 'upload' AND (created_at, id) < ($2, $3)
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [userId, before.created_at, before.id, limit],
      )
    : db.query<BackupRow>(`SELECT * FROM backups WHERE user_id = $1 AND origin = 'upload' ORDER BY created_at DESC, id DESC LIMIT $2`, [userId, limit]);
}

export async function findBackup(db: Queryable, id: string) {
  return (await db.query<BackupRow>('SELECT * FROM backups WHERE id = $1', [id]))[0];
}

/** A backup as its owner sees it: another user's looks missing. */
export async function findUserBackup(db: Queryable, userId: string, id: string) {
  return (await db.query<BackupRow>('SELECT * FROM backups WHERE id = $1 AND user_id = $2', [id, userId]))[0];
}

export async function findBackupInProgress(db: Queryable, nodeId: string) {
  return (await db.query<BackupRow>(`SELECT * FROM backups WHERE node_id = $1 AND status = 'IN_PROGRESS'`, [nodeId]))[0];
}

/** One page of a node's backups, newest first; `before` is the id of the last one of the previous page. */
export async function listNodeBackups(db: Queryable, nodeId: string, limit: number, before?: BackupRow) {
  return before
    ? db.query<BackupRow>(
        `SELECT * FROM backups WHERE node_id = $1 AND (created_at, id) < ($2, $3)
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [nodeId, before.created_at, before.id, limit],
      )
    : db.query<BackupRow>('SELECT * FROM backups WHERE node_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [nodeId, limit]);
}

/** Says the backup is still being worked on; false when it is not in progress any more (failed by the janitor). */
export async function touchBackup(db: Queryable, id: string) {
  const rows = await db.query(`UPDATE backups SET heartbeat_at = now() WHERE id = $1 AND status = 'IN_PROGRESS' RETURNING id`, [id]);
  return rows.length > 0;
}

/** Returns the row when it was still in progress (one failed by the janitor is not revived). */
export async function markBackupSucceeded(
  db: Queryable,
  id: string,
  r: { blobKey: string; sizeBytes: number; sha256: string; unlockError: string | null },
) {
  return (
    await db.query<BackupRow>(
      `UPDATE backups SET status = 'SUCCEEDED', blob_key = $2, size_bytes = $3, sha256 = $4, unlock_error = $5, finished_at = now()
       WHERE id = $1 AND status = 'IN_PROGRESS' RETURNING *`,
      [id, r.blobKey, r.sizeBytes, r.sha256, r.unlockError],
    )
  )[0];
}

export async function markBackupFailed(db: Queryable, id: string, r: { code: string; message: string; unlockError: string | null }) {
  return (
    await db.query<BackupRow>(
      `UPDATE backups SET status = 'FAILED', error_code = $2, error_message = $3, unlock_error = $4, finished_at = now()
       WHERE id = $1 AND status = 'IN_PROGRESS' RETURNING *`,
      [id, r.code, r.message, r.unlockError],
    )
  )[0];
}

/** Fails every backup whose runner has not said it is alive since `silentSince`. */
export async function failSilentBackups(db: Queryable, silentSince: Date, code: string, message: string) {
  return db.query<BackupRow>(
    `UPDATE backups SET status = 'FAILED', error_code = $2, error_message = $3, finished_at = now()
     WHERE status = 'IN_PROGRESS' AND heartbeat_at < $1 RETURNING *`,
    [silentSince, code, message],
  );
}

/**
 * Finished backups retention removes: older than `createdBefore`, or past the newest `keepPerNode`
 * successful ones of their node. The newest successful backup of a node that still exists is
 * always kept, however old: retention must never leave a live node without any backup. An export's
 * successful final backup follows its own rule alone: removed once older than
 * `exportCreatedBefore`, whatever became of its node; an exported node counts as gone for the others.
 */
export async function listExpiredBackups(db: Queryable, createdBefore: Date, keepPerNode: number, exportCreatedBefore: Date, limit = 500) {
  return db.query<BackupRow>(
    `WITH ranked AS (
       SELECT b.*, row_number() OVER (PARTITION BY b.node_id, b.status = 'SUCCEEDED' ORDER BY b.created_at DESC, b.id DESC) AS rank,
              EXISTS (SELECT 1 FROM nodes n WHERE n.id = b.node_id AND n.destroyed_at IS NULL AND n.status <> 'EXPORTED') AS node_lives,
              (b.for_export AND b.status = 'SUCCEEDED') AS exported_wallet
       FROM backups b WHERE b.status <> 'IN_PROGRESS'
     )
     SELECT * FROM ranked
     WHERE CASE WHEN exported_wallet THEN created_at < $4
           ELSE NOT (status = 'SUCCEEDED' AND node_id IS NOT NULL AND rank = 1 AND node_lives)
                AND (created_at < $1 OR (status = 'SUCCEEDED' AND node_id IS NOT NULL AND rank > $2)) END
     ORDER BY created_at LIMIT $3`,
    [createdBefore, keepPerNode, limit, exportCreatedBefore],
  );
}

export async function deleteBackup(db: Queryable, id: string) {
  await db.query('DELETE FROM backups WHERE id = $1', [id]);
}

/** The newest successful backup any of `nodeIds` made (one wallet's nodes: a node and those that superseded it). */
export async function newestSucceededNodeBackup(db: Queryable, nodeIds: readonly string[]) {
  return (
    await db.query<Pick<BackupRow, 'id' | 'node_id' | 'created_at'>>(
      `SELECT id, node_id, created_at FROM backups WHERE node_id = ANY($1::text[]) AND origin = 'node' AND status = 'SUCCEEDED'
       ORDER BY created_at DESC, id DESC LIMIT 1`,
      [nodeIds],
    )
  )[0];
}

/** Whether any of `nodeIds` (one wallet's nodes) was exported: its export's final backup succeeded. */
export async function anyNodeExported(db: Queryable, nodeIds: readonly string[]) {
  const rows = await db.query(`SELECT 1 FROM backups WHERE node_id = ANY($1::text[]) AND for_export AND status = 'SUCCEEDED' LIMIT 1`, [nodeIds]);
  return rows.length > 0;
}

/** Locks an upload's row; answers the node it is tied to now, if any. */
export async function lockUploadSource(db: Queryable, backupId: string) {
  const [row] = await db.query<{ source_node_id: string | null }>(`SELECT source_node_id FROM backups WHERE id = $1 AND origin = 'upload' FOR UPDATE`, [backupId]);
  return row?.source_node_id ?? undefined;
}

/** An upload of no known node is restored into `nodeId`: that node holds its wallet now. */
export async function tieUploadToNode(db: Queryable, backupId: string, nodeId: string) {
  await db.query(`UPDATE backups SET source_node_id = $2 WHERE id = $1 AND origin = 'upload' AND source_node_id IS NULL`, [backupId, nodeId]);
}

/** The restore into `nodeId` restored nothing: an upload tied to it by that restore is free again. */
export async function untieUploadFromNode(db: Queryable, backupId: string, nodeId: string) {
  await db.query(`UPDATE backups SET source_node_id = NULL WHERE id = $1 AND origin = 'upload' AND source_node_id = $2 AND source_made_at IS NULL`, [backupId, nodeId]);
}

/** One of the user's uploads of this SHA-256 that a restore tied to its node: what another upload of that file is. */
export async function findUserTiedUploadBySha256(db: Queryable, userId: string, sha256: string) {
  return (
    await db.query<BackupRow>(
      `SELECT * FROM backups WHERE user_id = $1 AND sha256 = $2 AND origin = 'upload' AND source_node_id IS NOT NULL ORDER BY created_at DESC LIMIT 1`,
      [userId, sha256],
    )
  )[0];
}
