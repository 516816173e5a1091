// Keeps backups honest and bounded: fails a backup whose runner went silent (the replica died, and
// the password, held only in its memory, died with it), cleans up after it, and deletes backups
// past their retention. Every step is idempotent, so replicas sharing a database may all run it.
import type { Database } from '../db/database.ts';
import { deleteBackup, failSilentBackups, listExpiredBackups, type BackupRow } from '../db/backups.ts';
import { findNode } from '../db/nodes.ts';
import { recordNodeEvent } from '../db/node-events.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { BackupsConfig } from './settings.ts';
import { BACKUP_HEARTBEAT_MS, INTERRUPTED, type BackupMetrics } from './backup-run.ts';
import { backupBlobKey, backupStagingDir, nodeFileName } from './backup-file.ts';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AutoUnlockRequests } from '../nodes/unlock/auto-unlock-job.ts';

export interface BackupJanitorOptions {
  db: Database;
  blobs: BlobStore;
  runtime: Pick<NodeRuntime, 'storageFiles'>;
  config: { backups: BackupsConfig };
  dataDir: string;
  /**
   * Asked for a node that was unlocked when its interrupted backup locked it: the service can
   * unlock it again only with a password it keeps (automatic unlock); otherwise it stays locked.
   * Absent: it stays locked.
   */
  autoUnlock?: Pick<AutoUnlockRequests, 'afterLeftLocked'>;
  log: Logger;
  intervalMs?: number;
  /** Told of every backup found interrupted (counted as failed). */
  metrics?: BackupMetrics;
}

const DAY = 24 * 3600_000;
const RETENTION_EVERY_MS = 10 * 60_000;

export class BackupJanitor {
  private readonly loop: BackgroundLoop;
  private lastRetention = 0;
  /** Embedded PGlite: one process, so every backup in progress from before this start was left by a crash. */
  private readonly startedAt = new Date();
  private firstSweep = true;

  constructor(private readonly opts: BackupJanitorOptions) {
    this.loop = new BackgroundLoop({
      name: 'backup sweep',
      intervalMs: opts.intervalMs ?? 10_000,
      log: opts.log,
      run: () => this.sweep(),
    });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
  }

  async sweep(now = new Date()): Promise<{ interrupted: number; expired: number }> {
    const soleProcess = this.firstSweep && this.opts.db.kind === 'pglite';
    this.firstSweep = false;
    const silentSince = soleProcess ? this.startedAt : new Date(now.getTime() - 4 * BACKUP_HEARTBEAT_MS);
    const interrupted = await failSilentBackups(
      this.opts.db,
      silentSince,
      INTERRUPTED,
      'the service stopped during the backup (the password is never stored, so it could not go on): start another',
    );
    for (const backup of interrupted) {
      this.opts.metrics?.backupFinished('failed', undefined);
      await this.cleanUpInterrupted(backup);
    }

    let expired = 0;
    if (now.getTime() - this.lastRetention >= RETENTION_EVERY_MS) {
      this.lastRetention = now.getTime();
      expired = await this.applyRetention(now);
    }
    if (interrupted.length + expired > 0) this.opts.log.info({ interrupted: interrupted.length, expired }, 'backups swept');
    return { interrupted: interrupted.length, expired };
  }

  private async cleanUpInterrupted(backup: BackupRow) {
    const { runtime, blobs, db, log } = this.opts;
    await blobs.deletePrefix(backupBlobKey(backup.id, backup.node_id)).catch(() => {});
    // Staged on the runner's disk: this one's, on one machine (another machine's goes with its pod).
    await rm(join(backupStagingDir(this.opts.dataDir), backup.id), { force: true });
    if (!backup.node_id) return;
    const node = await findNode(db, backup.node_id);
    if (!node) return;
    await runtime.storageFiles.remove(node.id, nodeFileName(backup.id)).catch((err: unknown) => log.warn({ err, backupId: backup.id }, 'could not remove an interrupted backup file'));
    await recordNodeEvent(db, node, 'NODE_BACKUP_FAILED', { backupId: backup.id, code: INTERRUPTED, reason: backup.error_message });
    if (backup.was_unlocked && node.locked && this.opts.autoUnlock) await this.opts.autoUnlock.afterLeftLocked(node.id);
  }

  private async applyRetention(now: Date): Promise<number> {
    const { retentionDays, keepPerNode, exportRetentionDays } = this.opts.config.backups;
    const cutoff = new Date(now.getTime() - retentionDays * DAY);
    const exportCutoff = new Date(now.getTime() - exportRetentionDays * DAY);
    let expired = 0;
    for (;;) {
      const batch = await listExpiredBackups(this.opts.db, cutoff, keepPerNode, exportCutoff);
      for (const backup of batch) {
        // The object first: a crash in between leaves a row to retry with, never an unlisted object.
        await this.opts.blobs.deletePrefix(backup.blob_key ?? backupBlobKey(backup.id, backup.node_id));
        await deleteBackup(this.opts.db, backup.id);
        expired++;
      }
      if (batch.length === 0) return expired;
    }
  }
}
