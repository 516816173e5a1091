// Keeps collected node output (segments, Kubernetes) within what exports promise: per node the
// newest LOG_FILE_MAX_BYTES x (LOG_FILES_KEPT + 1) bytes, the bound of the process runtime's
// rotated files, and nothing of a node destroyed or purged. Blob first, then its record: a crash
// in between leaves a record whose blob is gone (an export skips it) and the next sweep removes
// it. Idempotent, so every replica may run it.
import type { Database } from '../db/database.ts';
import { deleteNodeLogSegment, listExpiredNodeLogSegments } from '../db/node-log-segments.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import type { Logger } from '../logger.ts';
import type { LogsConfig } from './settings.ts';

export interface SegmentJanitorOptions {
  db: Database;
  /** The `node-logs` area of the blob store. */
  blobs: BlobStore;
  config: { logs: LogsConfig };
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
    return deleted;
  }
}
