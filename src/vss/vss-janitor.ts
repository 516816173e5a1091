// Measures each node's VSS store (nodes.vss_bytes: its answer, its page, the soft limit's gauge)
// and removes a destroyed node's VSS store once the node's record is due to go (DESTROYED_RETENTION_HOURS,
// docs/VSS.md): until then its channel state can still be read back (issue #43 restores from it).
// Runs before the reconcile loop's purge of the node's record, so the store's large values in the
// blob store go with it; idempotent, so every replica may run it.
import type { Database } from '../db/database.ts';
import { deleteExpiredVssStores, measureVssBytes } from '../db/vss.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';

const BATCH = 100;
// An hour before the purge: this sweep runs every few minutes, the purge about hourly.
const AHEAD_HOURS = 1;

export class VssJanitor {
  private readonly loop: BackgroundLoop;

  constructor(private readonly opts: { db: Database; blobs: BlobStore; destroyedRetentionHours: number; log: Logger; intervalMs?: number }) {
    this.loop = new BackgroundLoop({ name: 'VSS store sweep', intervalMs: opts.intervalMs ?? 5 * 60_000, log: opts.log, run: () => this.pass() });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
  }

  private async pass() {
    await this.sweep();
    await this.measure();
  }

  /**
   * Sums each store's values onto its node. One pass over vss_objects every few minutes (on every
   * replica: it is idempotent) rather than a counter every write would have to update: a write
   * stays one statement, and the soft limit needs no precision to the second.
   */
  async measure(): Promise<number> {
    return measureVssBytes(this.opts.db);
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
