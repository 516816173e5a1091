// Measures how much storage each running node takes and how full its volume is, and records it on
// the node (GET /api/nodes/{id} `storage`, the web UI's node page, the rlncloud_node_storage_
// fullest_ratio gauge and its alert). One replica measures at a time (a lease): on Kubernetes each
// measurement is a command run in the node's pod, and every replica sees the same pods.
//
// Only nodes whose daemon runs are measured: on Kubernetes a stopped node's volume is mounted
// nowhere, and a paused node's files do not grow. Its last measurement stays on it.
import type { Database } from '../../db/database.ts';
import { recordNodeStorage } from '../../db/node-storage.ts';
import { BackgroundLoop } from '../../jobs/background-loop.ts';
import { LeaderLease } from '../../jobs/leader-lease.ts';
import type { Logger } from '../../logger.ts';
import type { NodeRuntime } from '../../runtime/types.ts';

export const STORAGE_METER_LEASE = 'storage-meter';
const LEASE_TTL_MS = 60_000;
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
  private readonly loop: BackgroundLoop;
  private readonly lease: LeaderLease;

  constructor(private readonly opts: StorageMeterOptions) {
    this.lease = new LeaderLease({ db: opts.db, name: STORAGE_METER_LEASE, holder: opts.replicaId, ttlMs: LEASE_TTL_MS, log: opts.log });
    this.loop = new BackgroundLoop({ name: 'storage measurement pass', intervalMs: opts.intervalMs, log: opts.log, run: () => this.measureAll() });
  }

  start() {
    this.loop.start();
  }

  async stop() {
    await this.loop.stop();
    await this.lease.release().catch((err) => this.opts.log.warn({ err }, 'handing back the storage meter lease failed; it expires by itself'));
  }

  /** One pass: every running node, a few at a time, while this replica holds the lease. */
  async measureAll(): Promise<void> {
    if (!(await this.lease.ensure())) return;
    const queue = this.opts.runtime.runningDaemons();
    const worker = async () => {
      for (let nodeId = queue.shift(); nodeId !== undefined; nodeId = queue.shift()) {
        if (this.loop.stopping || !(await this.lease.ensure())) return;
        await this.measure(nodeId);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
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
