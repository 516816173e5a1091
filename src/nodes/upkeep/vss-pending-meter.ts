// Asks each running, unlocked node with continuous state how many state writes it holds that VSS
// has not (its /vssbackupinfo `pending_kv_writes`) and keeps the count (db/vss-state.ts) for the
// rlncloud_vss_nodes_with_pending_writes gauge and the RlnCloudVssPendingWrites alert. A daemon
// queues a write VSS refused or could not take and sends it again before its next one: a count
// that stays above 0 is state that would be lost with the node's volume. One replica asks at a
// time (a lease); the node page's read (continuous-state.ts) records its answer too.
import type { Database } from '../../db/database.ts';
import { findNodes } from '../../db/nodes.ts';
import { forgetVssPendingWrites, recordVssPendingWrites } from '../../db/vss-state.ts';
import type { Node } from '../../domain/nodes.ts';
import { LeasedPass } from '../../jobs/leased-pass.ts';
import type { Logger } from '../../logger.ts';
import type { NodeRuntime } from '../../runtime/types.ts';
import type { NodeDaemons } from '../node-daemons.ts';
import { whyNotAsked } from '../health/continuous-state.ts';
import { PROBE_TIMEOUT_MS } from '../health/node-health.ts';

export const VSS_PENDING_METER_LEASE = 'vss-pending-meter';
/** Daemons asked at once. */
const CONCURRENCY = 8;

export interface VssPendingMeterOptions {
  db: Database;
  runtime: Pick<NodeRuntime, 'runningDaemons'>;
  daemons: Pick<NodeDaemons, 'of'>;
  /** VSS_PENDING_CHECK_INTERVAL_MS. */
  intervalMs: number;
  replicaId: string;
  log: Logger;
}

export class VssPendingMeter {
  private readonly pass: LeasedPass<Node>;

  constructor(private readonly opts: VssPendingMeterOptions) {
    this.pass = new LeasedPass({
      db: opts.db,
      lease: VSS_PENDING_METER_LEASE,
      replicaId: opts.replicaId,
      name: 'VSS pending writes pass',
      intervalMs: opts.intervalMs,
      concurrency: CONCURRENCY,
      items: () => findNodes(opts.db, opts.runtime.runningDaemons()),
      each: (node) => this.sample(node),
      log: opts.log,
    });
  }

  start() {
    this.pass.start();
  }

  stop() {
    return this.pass.stop();
  }

  /** One pass over the running nodes, while this replica holds the lease. */
  sampleAll(): Promise<void> {
    return this.pass.runOnce();
  }

  private async sample(node: Node) {
    try {
      if (whyNotAsked(node)) await forgetVssPendingWrites(this.opts.db, node.id);
      else await recordVssPendingWrites(this.opts.db, node.id, (await this.opts.daemons.of(node).vssBackupInfo(PROBE_TIMEOUT_MS)).pendingKvWrites);
    } catch (err) {
      // The last count stays until it is too old to count (metrics/definitions.ts): a daemon
      // that cannot answer now (VSS unreachable from it, a pod moving) is asked again next pass.
      this.opts.log.warn({ err, nodeId: node.id }, "could not read a node's pending VSS writes");
    }
  }
}
