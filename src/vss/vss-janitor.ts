// Removes a destroyed node's VSS store once the node's record is due to go (DESTROYED_RETENTION_HOURS,
// docs/VSS.md): until then its channel state can still be read back (issue #43 restores from it).
// Runs before the reconcile loop's purge of the node's record, so the store's large values in the
// blob store go with it; idempotent, so every replica may run it.
import type { Database } from '../db/database.ts';
import { deleteExpiredVssStores } from '../db/vss.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';

const BATCH = 100;
// An hour before the purge: this sweep runs every few minutes, the purge about hourly.
const AHEAD_HOURS = 1;

export class VssJanitor {
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: { db: Database; blobs: BlobStore; destroyedRetentionHours: number; log: Logger; intervalMs?: number }) {
    this.loop = new BackgroundLoop({ name: 'VSS store sweep', intervalMs: opts.intervalMs ?? 5 * 60_000, log: opts.log, run: () => this.sweep() });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
  }

  /** Answers how many stores it removed. */
  async sweep(): Promise<number> {
    const hours = Math.max(0, this.opts.destroyedRetentionHours - AHEAD_HOURS);
    let removed = 0;
    for (;;) {
      const nodes = await deleteExpiredVssStores(this.opts.db, hours, BATCH);
      // Blob keys of a store's values start with its node id (vss/blob-values.ts).
      for (const nodeId of nodes) await this.opts.blobs.deletePrefix(`${nodeId}/`);
      removed += nodes.length;
      if (nodes.length < BATCH) break;
    }
    if (removed > 0) this.opts.log.info({ removed }, 'deleted the VSS stores of nodes destroyed long ago');
    return removed;
  }
}
