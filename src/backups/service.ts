// Backups as users see them: start one of a node (this replica runs it, holding the password in
// memory only), list a node's, read one with a fresh download URL once finished, delete one.
import type { Database, Queryable } from '../db/database.ts';
import { findUserNode, lockUserNode } from '../db/nodes.ts';
import {
  deleteBackup,
  findBackupInProgress,
  insertUploadedBackup,
  findUserBackup,
  insertNodeBackup,
  listNodeBackups,
  listUserUploads,
  findUserNodeBackupBySha256,
  findUserTiedUploadBySha256,
  userUploadUsage,
  type BackupRow,
} from '../db/backups.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import type { Network, Node } from '../domain/nodes.ts';
import { newId } from '../auth/tokens.ts';
import { decodeCursor, encodeCursor, pageOf, staleCursor } from '../domain/paging.ts';
import type { BackupsConfig } from './settings.ts';
import { runBackup, type BackupRunDeps } from './backup-run.ts';
import { backupBlobKey, storeBackupFile, TooLargeError } from './backup-file.ts';
import { presentBackup, type ApiBackup } from './present.ts';
import { requireExportable } from './export.ts';

export interface BackupServiceDeps extends BackupRunDeps {
  config: { backups: BackupsConfig };
  /** This process among the replicas: a backup's runner. */
  replicaId: string;
}

export type BackupAnswer = ApiBackup & { downloadUrl?: string; expiresAt?: string };

export { MAX_PAGE as MAX_BACKUP_PAGE } from '../domain/paging.ts';

export class BackupService {
  /** Backups this replica is running, by id, with what stops them when the service stops. */
  private readonly running = new Map<string, { done: Promise<void>; abort: AbortController }>();

  constructor(private readonly deps: BackupServiceDeps) {}

  /** Starts a backup of the node; answers its record (IN_PROGRESS) at once. */
  async startBackup(userId: string, nodeId: string, password: string): Promise<ApiBackup> {
    return this.begin(userId, nodeId, password, { forExport: false, judge: async (_tx, node) => requireBackupable(node) });
  }

  /**
   * Starts the export of the node (backups/export.ts): its final backup, after which it is EXPORTED
   * and stopped for good; a failed one leaves the node as any failed backup does. `confirm` is the
   * node's name. Answers the backup's record (IN_PROGRESS) at once.
   */
  async startExport(userId: string, nodeId: string, password: string, confirm: string): Promise<ApiBackup> {
    return this.begin(userId, nodeId, password, { forExport: true, judge: (tx, node) => requireExportable(tx, node, confirm) });
  }

  private async begin(
    userId: string,
    nodeId: string,
    password: string,
    how: { forExport: boolean; judge: (tx: Queryable, node: Node) => Promise<void> },
  ): Promise<ApiBackup> {
    const { backup, node } = await this.deps.db.transaction(async (tx) => {
      // The node row lock serialises two concurrent requests for one node (and a lifecycle change).
      const node = await lockUserNode(tx, userId, nodeId);
      if (!node) throw nodeNotFound(nodeId);
      await how.judge(tx, node);
      const running = await findBackupInProgress(tx, nodeId);
      if (running) {
        throw new AppError('backup_in_progress', `node ${nodeId} has a backup in progress (${running.id}); wait for it to finish`, {
          backupId: running.id,
        });
      }
      const backup = await insertNodeBackup(tx, {
        id: newId(),
        userId,
        nodeId,
        network: node.network,
        imageVersion: node.imageVersion,
        wasUnlocked: !node.locked,
        runner: this.deps.replicaId,
        forExport: how.forExport,
      });
      return { backup, node };
    });
    const abort = new AbortController();
    const done = runBackup(this.deps, backup, node, password, abort.signal)
      .catch((err: unknown) => this.deps.log.error({ err, backupId: backup.id }, 'backup could not be recorded'))
      .finally(() => this.running.delete(backup.id));
    this.running.set(backup.id, { done, abort });
    return presentBackup(backup);
  }

  /** A page of the node's backups, newest first, and the cursor of the next page (null after the last). */
  async listBackups(userId: string, nodeId: string, limit: number, cursor: string | undefined): Promise<{ backups: ApiBackup[]; nextCursor: string | null }> {
    await this.ownNode(userId, nodeId);
    let after: BackupRow | undefined;
    if (cursor !== undefined) {
      after = await findUserBackup(this.deps.db, userId, decodeCursor('backup', cursor, /^[0-9a-f]{32}$/));
      if (!after || after.node_id !== nodeId) throw staleCursor();
    }
    const rows = await listNodeBackups(this.deps.db, nodeId, limit + 1, after);
    const page = pageOf(rows, limit, (last) => encodeCursor('backup', last.id));
    return { backups: page.items.map(presentBackup), nextCursor: page.nextCursor };
  }

  /** One backup; a finished one with a download URL valid BACKUP_URL_TTL_SECONDS, fresh on every call. */
  async getBackup(userId: string, nodeId: string, backupId: string): Promise<BackupAnswer> {
    const backup = await this.ownBackup(userId, nodeId, backupId);
    if (backup.status !== 'SUCCEEDED' || !backup.blob_key) return presentBackup(backup);
    const { url, expiresAt } = await this.deps.blobs.presignGet(backup.blob_key, {
      expiresInSeconds: this.deps.config.backups.urlTtlSeconds,
      filename: `rln-node-${backup.node_id}-backup-${backup.id}.rlnbackup`,
    });
    return { ...presentBackup(backup), downloadUrl: url, expiresAt: expiresAt.toISOString() };
  }

  async deleteBackup(userId: string, nodeId: string, backupId: string): Promise<void> {
    const backup = await this.ownBackup(userId, nodeId, backupId);
    if (backup.status === 'IN_PROGRESS') {
      throw new AppError('backup_in_progress', `backup ${backupId} is still running; delete it once it has finished`, { backupId });
    }
    // The object first: a crash in between leaves a record without a file (deleted again on
    // retry), never a file nobody can find.
    await this.deps.blobs.deletePrefix(backup.blob_key ?? backupBlobKey(backup.id, backup.node_id));
    await deleteBackup(this.deps.db, backup.id);
  }

  /**
   * Stores a backup file the user sends (to restore a node from it): streamed to the blob store,
   * recorded only once whole, refused past BACKUP_UPLOAD_MAX_BYTES and past the user's upload quota
   * (BACKUP_UPLOAD_QUOTA_BYTES, BACKUP_UPLOAD_QUOTA_COUNT). The service cannot read the file (the
   * node checks it on /restore, with the password), but it recognises one of the user's own node
   * backups by its SHA-256: the upload is then tied to that node (nodes/restore/restore-fence.ts) and of its
   * network. Any other file must say which network it is for (`network`).
   */
  async uploadBackup(userId: string, source: AsyncIterable<Uint8Array>, declared: { network?: Network; sizeBytes?: number } = {}): Promise<ApiBackup> {
    const { maxUploadBytes, uploadQuotaBytes, uploadQuotaCount } = this.deps.config.backups;
    const before = await userUploadUsage(this.deps.db, userId);
    requireQuota(before, declared.sizeBytes ?? 1, uploadQuotaBytes, uploadQuotaCount);
    const id = newId();
    const key = backupBlobKey(id, null);
    // Past what is left of the quota, the upload stops as soon as it gets there.
    const left = uploadQuotaBytes - before.bytes;
    const maxBytes = Math.min(maxUploadBytes, left);
    let stored;
    try {
      stored = await storeBackupFile(source, { blobs: this.deps.blobs, key, dataDir: this.deps.dataDir, stagingName: `upload-${id}`, maxBytes });
    } catch (err) {
      if (err instanceof TooLargeError) throw maxBytes < maxUploadBytes ? quotaExceeded(before, uploadQuotaBytes, uploadQuotaCount) : tooLarge(maxUploadBytes);
      throw err;
    }
    const discard = () => this.deps.blobs.deletePrefix(key).catch(() => {});
    try {
      if (stored.sizeBytes === 0) throw new AppError('invalid_request', 'the upload is empty: send the backup file as the request body');
      const row = await this.deps.db.transaction(async (tx) => {
        // Counted again under the user's row lock: two uploads at once cannot both take the last room.
        requireQuota(await userUploadUsage(tx, userId, true), stored.sizeBytes, uploadQuotaBytes, uploadQuotaCount);
        const original = await findUserNodeBackupBySha256(tx, userId, stored.sha256);
        // A file uploaded before and since restored is tied to the node it went into: so is this copy of it.
        const restored = original ? undefined : await findUserTiedUploadBySha256(tx, userId, stored.sha256);
        const known = original ?? restored;
        if (known && declared.network && known.network && declared.network !== known.network) {
          const problem = `this file is backup ${known.id} of a ${known.network} node, not ${declared.network}`;
          throw new AppError('invalid_request', problem, { problems: [problem] });
        }
        const network = known?.network ?? declared.network ?? null;
        if (!network) {
          const problem = 'say which network this backup is for: ?network=regtest or ?network=testnet (the service cannot read the file, and a restore into the other network fails)';
          throw new AppError('invalid_request', problem, { problems: [problem] });
        }
        return insertUploadedBackup(tx, {
          id,
          userId,
          blobKey: key,
          ...stored,
          network,
          sourceNodeId: original?.node_id ?? restored?.source_node_id ?? null,
          sourceMadeAt: original?.created_at ?? null,
          imageVersion: original?.image_version ?? null,
        });
      });
      return presentBackup(row);
    } catch (err) {
      await discard();
      throw err;
    }
  }

  /** A page of the user's uploads, newest first, and the cursor of the next page (null after the last). */
  async listUploads(userId: string, limit: number, cursor: string | undefined): Promise<{ uploads: ApiBackup[]; nextCursor: string | null }> {
    let after: BackupRow | undefined;
    if (cursor !== undefined) {
      after = await findUserBackup(this.deps.db, userId, decodeCursor('upload', cursor, /^[0-9a-f]{32}$/));
      if (!after || after.origin !== 'upload') throw staleCursor();
    }
    const rows = await listUserUploads(this.deps.db, userId, limit + 1, after);
    const page = pageOf(rows, limit, (last) => encodeCursor('upload', last.id));
    return { uploads: page.items.map(presentBackup), nextCursor: page.nextCursor };
  }

  /** Removes one of the user's uploads and its file; another user's, or a node's backup, is 404. */
  async deleteUpload(userId: string, backupId: string): Promise<void> {
    const backup = await findUserBackup(this.deps.db, userId, backupId);
    if (!backup || backup.origin !== 'upload') throw new AppError('backup_not_found', `upload ${backupId} was not found`);
    await this.deps.blobs.deletePrefix(backup.blob_key ?? backupBlobKey(backup.id, null));
    await deleteBackup(this.deps.db, backup.id);
  }

  /** Waits for the backups in hand until `deadline`, then interrupts the rest (each is recorded FAILED). */
  async stop(deadline = Date.now()): Promise<void> {
    const all = () => Promise.all([...this.running.values()].map((r) => r.done));
    await Promise.race([all(), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
    for (const run of this.running.values()) run.abort.abort();
    // An interrupted run still unlocks the node again and records the outcome: a moment more.
    await Promise.race([all(), new Promise((r) => setTimeout(r, 2_000).unref())]);
  }

  private async ownNode(userId: string, nodeId: string) {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    return node;
  }

  private async ownBackup(userId: string, nodeId: string, backupId: string) {
    await this.ownNode(userId, nodeId);
    const backup = await findUserBackup(this.deps.db, userId, backupId);
    if (!backup || backup.node_id !== nodeId) throw new AppError('backup_not_found', `backup ${backupId} was not found for node ${nodeId}`);
    return backup;
  }
}

/** RLN backs up only an initialized wallet, and the daemon must be up to write the file. */
export function requireBackupable(node: Node) {
  if (node.status === 'DESTROYING' || node.status === 'DESTROYED') {
    throw new AppError('node_destroyed', `node ${node.id} is ${node.status}`, { status: node.status });
  }
  if (node.status !== 'RUNNING' || node.desiredState !== 'running') {
    const what = node.status === 'RUNNING' ? 'being stopped' : node.status;
    throw new AppError('node_not_running', `node ${node.id} is ${what}; a backup needs it RUNNING`, { status: node.status });
  }
  if (!node.initialized) {
    throw new AppError('node_not_initialized', `node ${node.id} has no wallet yet (initialise it first): there is nothing to back up`);
  }
}

export const tooLarge = (maxBytes: number) =>
  new AppError('payload_too_large', `the backup file is larger than BACKUP_UPLOAD_MAX_BYTES (${maxBytes} bytes)`, { maxBytes });

/** Whether one more upload of `sizeBytes` fits the user's quota; 409 backup_quota_exceeded if not. */
export function requireQuota(usage: { count: number; bytes: number }, sizeBytes: number, quotaBytes: number, quotaCount: number) {
  if (usage.count + 1 > quotaCount || usage.bytes + sizeBytes > quotaBytes) throw quotaExceeded(usage, quotaBytes, quotaCount);
}

const quotaExceeded = (usage: { count: number; bytes: number }, quotaBytes: number, quotaCount: number) =>
  new AppError(
    'backup_quota_exceeded',
    `your uploaded backups would exceed the quota (${quotaCount} files, ${quotaBytes} bytes; you keep ${usage.count} files of ${usage.bytes} bytes): ` +
      'delete uploads you no longer need (DELETE /api/backups/uploads/{backupId}) and try again',
    { quotaBytes, quotaCount, usedBytes: usage.bytes, usedCount: usage.count },
  );
