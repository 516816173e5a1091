// Keeps collected node output (segments, Kubernetes) within what exports promise: per node the
// newest LOG_FILE_MAX_BYTES x (LOG_FILES_KEPT + 1) bytes, the bound of the process runtime's
// rotated files, and nothing of a node destroyed or purged. Blob first, then its record: a crash
// in between leaves a record whose blob is gone (an export skips it) and the next sweep removes
// it. Staging files a crash left behind go after an hour. Idempotent, so every replica may run it.
// (A blob stored by a replica that crashed before recording it stays: it is no segment, and only a
// listing of the store could find it.)
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '../db/database.ts';
import { deleteNodeLogSegment, listExpiredNodeLogSegments } from '../db/node-log-segments.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { Logger } from '../logger.ts';
import type { LogsConfig } from './settings.ts';

const STAGING_MAX_AGE_MS = 3600_000;

/** Where a segment is written before it goes to the blob store. */
export const segmentStagingDir = (dataDir: string) => join(dataDir, 'node-logs', 'staging');

export interface SegmentJanitorOptions {
  db: Database;
  /** The `node-logs` area of the blob store. */
  blobs: BlobStore;
  config: { dataDir: string; logs: LogsConfig };
  log: Logger;
  intervalMs?: number;
}

export class SegmentJanitor {
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: SegmentJanitorOptions) {
    this.loop = new BackgroundLoop({ name: 'node log segment sweep', intervalMs: opts.intervalMs ?? 10 * 60_000, log: opts.log, run: () => this.sweep() });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
  }

  /** Deletes segments past their node's budget; returns how many. */
  async sweep(): Promise<number> {
    const { logs } = this.opts.config;
    const keepBytes = logs.maxFileBytes * (logs.maxFiles + 1);
    let deleted = 0;
    for (;;) {
      const batch = await listExpiredNodeLogSegments(this.opts.db, keepBytes);
      for (const segment of batch) {
        await this.opts.blobs.delete(segment.blobKey);
        await deleteNodeLogSegment(this.opts.db, segment.nodeId, segment.seq);
        deleted++;
      }
      if (batch.length === 0) break;
    }
    if (deleted > 0) this.opts.log.info({ segments: deleted }, 'node log segments swept');
    await this.removeStaleStaging(new Date(Date.now() - STAGING_MAX_AGE_MS));
    return deleted;
  }

  /** Files a crash left between writing a segment and storing it (a store takes seconds). */
  private async removeStaleStaging(olderThan: Date) {
    const dir = segmentStagingDir(this.opts.config.dataDir);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const st = await stat(path).catch(() => undefined);
      if (st && st.mtime < olderThan) await rm(path, { force: true });
    }
  }
}
