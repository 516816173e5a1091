// Measures how much storage each running node takes and how full its volume is, and records it on
// the node (GET /api/nodes/{id} `storage`, the web UI's node page, the rlncloud_node_storage_
// fullest_ratio gauge and its alert). One replica measures at a time (a lease): on Kubernetes each
// measurement is a command run in the node's pod, and every replica sees the same pods.
//
// Only nodes whose daemon runs are measured: on Kubernetes a stopped node's volume is mounted
// nowhere, and a paused node's files do not grow. Its last measurement stays on it.
import type { Database } from '../../db/database.ts';
import { recordNodeStorage } from '../../db/node-storage.ts';
import { LeasedPass } from '../../jobs/leased-pass.ts';
import type { Logger } from '../../logger.ts';
import type { NodeRuntime } from '../../runtime/types.ts';

export const STORAGE_METER_LEASE = 'storage-meter';
/** Measurements under way at once: each is one exec through the API server on Kubernetes. */
const CONCURRENCY = 4;

export interface StorageMeterOptions {
  db: Database;
  runtime: Pick<NodeRuntime, 'runningDaemons' | 'storageFiles'>;
  /** NODE_STORAGE_CHECK_INTERVAL_MS: the pause between two passes over the running nodes. */
  intervalMs: number;
  replicaId: string;
  log: Logger;
}

export class StorageMeter {
  private readonly pass: LeasedPass<string>;

  constructor(private readonly opts: StorageMeterOptions) {
    this.pass = new LeasedPass({
      db: opts.db,
      lease: STORAGE_METER_LEASE,
      replicaId: opts.replicaId,
      name: 'storage measurement pass',
      intervalMs: opts.intervalMs,
      concurrency: CONCURRENCY,
      items: () => opts.runtime.runningDaemons(),
      each: (nodeId) => this.measure(nodeId),
      log: opts.log,
    });
  }

  start() {
    this.pass.start();
  }

  stop() {
    return this.pass.stop();
  }

  /** One pass: every running node, a few at a time, while this replica holds the lease. */
  measureAll(): Promise<void> {
    return this.pass.runOnce();
  }

  private async measure(nodeId: string) {
    try {
      const use = await this.opts.runtime.storageFiles.measure(nodeId);
      await recordNodeStorage(this.opts.db, nodeId, { ...use, measuredAt: new Date() });
    } catch (err) {
      // A daemon that stopped meanwhile, a pod being replaced: the next pass measures it again.
      this.opts.log.warn({ err, nodeId }, 'could not measure a node\'s storage');
    }
  }
}
