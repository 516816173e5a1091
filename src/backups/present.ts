// A backup as the API answers it.
import type { BackupRow } from '../db/backups.ts';
import type { Network } from '../domain/nodes.ts';

export interface ApiBackup {
  backupId: string;
  /** The node backed up; null for an uploaded file. */
  nodeId: string | null;
  origin: 'node' | 'upload';
  /** The network of the node backed up, or the one an upload is for. */
  network: Network | null;
  /** An upload recognised as a backup of one of the user's nodes: that node (restores follow its fence). */
  sourceNodeId: string | null;
  status: BackupRow['status'];
  sizeBytes: number | null;
  sha256: string | null;
  imageVersion: string | null;
  createdAt: string;
  finishedAt: string | null;
  error?: { code: string; message: string };
  /** The final backup of an export (POST /api/nodes/{id}/export): kept BACKUP_EXPORT_RETENTION_DAYS. */
  forExport: boolean;
  /** Set when the node was unlocked before the backup and could not be unlocked again after it. */
  unlockError?: string;
}

export function presentBackup(b: BackupRow): ApiBackup {
  return {
    backupId: b.id,
    nodeId: b.node_id,
    origin: b.origin,
    network: b.network,
    sourceNodeId: b.origin === 'node' ? b.node_id : b.source_node_id,
    status: b.status,
    sizeBytes: b.size_bytes === null ? null : Number(b.size_bytes),
    sha256: b.sha256,
    imageVersion: b.image_version,
    createdAt: b.created_at.toISOString(),
    finishedAt: b.finished_at?.toISOString() ?? null,
    forExport: b.for_export,
    ...(b.status === 'FAILED' ? { error: { code: b.error_code ?? 'backup_failed', message: b.error_message ?? 'the backup failed' } } : {}),
    ...(b.unlock_error ? { unlockError: b.unlock_error } : {}),
  };
}
