// Keeps exports bounded in time and space: fails exports that ran far too long (so no task is
// ever stuck IN_PROGRESS, whatever happened to its job), deletes exports and their archives once
// LOG_EXPORT_RETENTION_HOURS have passed, and removes blobs and staging files nothing refers to
// any more (a node record purged with its exports, a crash mid-export). Every step is
// idempotent, so replicas sharing a database may all run it.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogsConfig } from './settings.ts';
import type { Database } from '../db/database.ts';
import { deleteLogExport, failLogExportsStartedBefore, listLogExportsCreatedBefore } from '../db/log-exports.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { exportBlobPrefix, exportStagingDir } from './export-job.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';

export interface ExportJanitorOptions {
  db: Database;
  blobs: BlobStore;
  config: { dataDir: string; logs: LogsConfig };
  log: Logger;
  /** How often a sweep runs; retention is measured in hours, so minutes are precise enough. */
  intervalMs?: number;
}

export interface SweepResult {
  timedOut: number;
  expired: number;
  orphanBlobs: number;
}

const HOUR = 3600_000;

export class ExportJanitor {
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: ExportJanitorOptions) {
    this.loop = new BackgroundLoop({
      name: 'log export sweep',
      intervalMs: opts.intervalMs ?? 10 * 60_000,
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

  async sweep(now = new Date()): Promise<SweepResult> {
    const { logs } = this.opts.config;
    const timeoutAt = new Date(now.getTime() - logs.exportTimeoutMinutes * 60_000);
    const timedOut = await failLogExportsStartedBefore(
      this.opts.db,
      timeoutAt,
      'export_timed_out',
      `the export did not finish within ${logs.exportTimeoutMinutes} minutes`,
    );
    for (const task of timedOut) await this.opts.blobs.deletePrefix(exportBlobPrefix(task.node_id, task.id));

    const retentionAt = new Date(now.getTime() - logs.exportRetentionHours * HOUR);
    let expired = 0;
    for (;;) {
      const batch = await listLogExportsCreatedBefore(this.opts.db, retentionAt);
      for (const task of batch) {
        // Archives first: a crash in between leaves a row to retry with, never an unlisted blob.
        await this.opts.blobs.deletePrefix(exportBlobPrefix(task.node_id, task.id));
        await deleteLogExport(this.opts.db, task.id);
        expired++;
      }
      if (batch.length === 0) break;
    }
    const orphanBlobs = await this.opts.blobs.deleteOlderThan(retentionAt);
    await this.removeStaleStaging(timeoutAt);
    const result = { timedOut: timedOut.length, expired, orphanBlobs };
    if (result.timedOut + result.expired + result.orphanBlobs > 0) this.opts.log.info(result, 'log exports swept');
    return result;
  }

  /** Staging folders of exports that can no longer be running (the job deletes its own). */
  private async removeStaleStaging(olderThan: Date) {
    const dir = exportStagingDir(this.opts.config.dataDir);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const st = await stat(path).catch(() => undefined);
      if (st && st.mtime < olderThan) await rm(path, { recursive: true, force: true });
    }
  }
}
