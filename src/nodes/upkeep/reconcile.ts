// The reconcile loop: compares what each node should be doing with what the runtime reports and
// repairs the difference. A daemon that died is started again (and, like every daemon start,
// comes back locked); a daemon that should not run is stopped. Nodes with a build in progress
// are left to their build.
//
// With several replicas on one database, only the holder of the `reconciler` lease repairs and
// does the housekeeping (jobs/leader-lease.ts), so two replicas never act
// on one node at once; the others take the lease over within RECONCILE_LEASE_TTL_MS of its holder
// dying, at once when it stops cleanly. Every replica still records the restarts its runtime
// reports (a node that came back is locked): that is one row change under the row's lock, the
// same whoever makes it.
import type { Database } from '../../db/database.ts';
import { listNodesThatShouldRun, listNodesToReconcile, lockNode, purgeDestroyedNodes } from '../../db/nodes.ts';
import { purgeExpiredIdempotencyKeys } from '../../db/idempotency.ts';
import { purgeDeletedAccounts } from '../../db/account-deletion.ts';
import { purgeFinishedJobs } from '../../db/jobs.ts';
import { applyDecision } from '../transition.ts';
import { daemonShouldRun, decide } from '../lifecycle.ts';
import type { Logger } from '../../logger.ts';
import type { NodeRuntime } from '../../runtime/types.ts';
import { specOf } from '../builds/build-job.ts';
import { enqueueAutoUnlock } from '../unlock/auto-unlock-job.ts';
import { BackgroundLoop } from '../../jobs/background-loop.ts';
import { LeaderLease } from '../../jobs/leader-lease.ts';
import type { Node } from '../../domain/nodes.ts';
import { markStorageLost, VOLUME_GONE } from '../health/storage-lost.ts';

/** What the reconcile loop reports; implemented by metrics/service-metrics.ts. */
export interface ReconcileMetrics {
  reconcilePassed(seconds: number, nodes: number): void;
}

export interface ReconcilerOptions {
  db: Database;
  runtime: NodeRuntime;
  intervalMs: number;
  destroyedRetentionHours: number;
  /** This replica's name in the lease table (jobs/leader-lease.ts: newReplicaId). */
  replicaId: string;
  /** How long the lease lasts unrenewed: how soon another replica takes over from a dead one. */
  leaseTtlMs?: number;
  /** Told how long each full pass took and how many nodes it looked at (metrics/service-metrics.ts); absent: nobody counts. */
  metrics?: ReconcileMetrics;
  log: Logger;
}

export const RECONCILE_LEASE = 'reconciler';
export const RECONCILE_LEASE_TTL_MS = 15_000;

const HOUSEKEEPING_EVERY_MS = 10 * 60_000;
// Finished jobs are only of use for diagnosing a recent failure; builds keep the lasting history.
const FINISHED_JOB_RETENTION_HOURS = 72;

const RESTART_BACKOFF_MAX_MS = 5 * 60_000;
const HEALTHY_AFTER_MS = 60_000;
// A pass looks at the nodes whose daemon should run and at the daemons the runtime runs, not at the
// whole fleet: in a fleet that is mostly paused, a paused node with no daemon has nothing to
// repair (at 10,000 nodes, a tenth running, a pass over every node took ~150 ms of database and
// event loop every 5 s, and the reads arriving meanwhile waited on it). It reads them a page at a
// time: over a runtime that answers from memory (watch caches, the in-memory runtime) nothing else
// in a pass waits for I/O, and between pages requests get through.
const NODES_PER_PAGE = 250;

export class Reconciler {
  private readonly loop: BackgroundLoop;
  private readonly lease: LeaderLease;
  /** Crash-looping daemons are restarted with growing delays, not in a tight loop. */
  private readonly restarts = new Map<string, { count: number; at: number; notBefore: number }>();
  private lastHousekeeping = 0;
  /**
   * Nodes whose daemon ended without being asked to. A runtime that restarts daemons itself
   * (Kubernetes) may have one up again before the next pass: it still came back locked.
   */
  private readonly restarted = new Set<string>();

  constructor(private readonly opts: ReconcilerOptions) {
    this.lease = new LeaderLease({
      db: opts.db,
      name: RECONCILE_LEASE,
      holder: opts.replicaId,
      ttlMs: opts.leaseTtlMs ?? RECONCILE_LEASE_TTL_MS,
      log: opts.log,
    });
    // The loop runs at least twice per TTL, so the holder renews in time between passes.
    const ttl = opts.leaseTtlMs ?? RECONCILE_LEASE_TTL_MS;
    this.loop = new BackgroundLoop({
      name: 'reconcile pass',
      intervalMs: Math.min(opts.intervalMs, ttl / 3),
      log: opts.log,
      run: () => this.reconcileOnce(),
    });
    opts.runtime.onUnexpectedExit((nodeId, detail) => {
      opts.log.warn({ nodeId, detail }, 'node daemon exited unexpectedly');
      this.restarted.add(nodeId);
      this.trigger();
    });
  }

  start() {
    this.loop.start();
  }

  /** Ends the loop, then hands the lease back so another replica takes over at once. */
  async stop() {
    await this.loop.stop();
    await this.lease.release().catch((err) => this.opts.log.warn({ err }, 'handing back the reconcile lease failed; it expires by itself'));
  }


  /** Runs a pass now, or right after the one in progress. */
  trigger() {
    this.loop.wake();
  }

  async reconcileOnce() {
    // Restarts seen before this pass, recorded by every replica that saw them.
    const restarted = [...this.restarted];
    this.restarted.clear();
    for (const nodeId of restarted) {
      try {
        await this.markLocked(nodeId);
      } catch (err) {
        this.opts.log.error({ nodeId, err }, 'recording a daemon restart failed');
      }
    }
    if (!(await this.lease.renew())) return;
    const started = performance.now();
    // Taken before the nodes that should run are read: a daemon started meanwhile is theirs.
    const running = this.opts.runtime.runningDaemons();
    const looked = new Set<string>();
    for (let afterId: string | null = null; ; ) {
      const nodes = await listNodesThatShouldRun(this.opts.db, afterId, NODES_PER_PAGE);
      if (!(await this.reconcilePage(nodes, looked))) return;
      if (nodes.length < NODES_PER_PAGE) break;
      afterId = nodes.at(-1)!.id;
    }
    // Daemons of nodes that should not run (stopped, failed, superseded): stopped here.
    const others = running.filter((nodeId) => !looked.has(nodeId));
    for (let from = 0; from < others.length; from += NODES_PER_PAGE) {
      const nodes = await listNodesToReconcile(this.opts.db, others.slice(from, from + NODES_PER_PAGE));
      if (!(await this.reconcilePage(nodes, looked))) return;
    }
    this.opts.metrics?.reconcilePassed((performance.now() - started) / 1000, looked.size);
    // Rollouts need no pass from here: every pass is a durable job (nodes/rollout/enqueue-pass.ts).
    if (!(await this.lease.ensure())) return;
    if (Date.now() - this.lastHousekeeping > HOUSEKEEPING_EVERY_MS) {
      this.lastHousekeeping = Date.now();
      const purged = await purgeDestroyedNodes(this.opts.db, this.opts.destroyedRetentionHours);
      if (purged > 0) this.opts.log.info({ purged }, 'deleted the records of nodes destroyed long ago');
      await purgeExpiredIdempotencyKeys(this.opts.db);
      // Accounts deleted while their nodes were being destroyed: their rows go once the last one is.
      const deletedAccounts = await purgeDeletedAccounts(this.opts.db);
      if (deletedAccounts > 0) this.opts.log.info({ deletedAccounts }, 'deleted the records of deleted accounts whose nodes are destroyed');
      await purgeFinishedJobs(this.opts.db, FINISHED_JOB_RETENTION_HOURS);
    }
  }

  /** Reconciles one page of nodes, then lets the event loop through; false once the lease is lost. */
  private async reconcilePage(nodes: Node[], looked: Set<string>): Promise<boolean> {
    for (const node of nodes) {
      // A pass that outlasts half the lease renews it; one that lost it stops acting at once.
      if (!(await this.lease.ensure())) return false;
      looked.add(node.id);
      try {
        await this.reconcileNode(node);
      } catch (err) {
        this.opts.log.error({ nodeId: node.id, err }, 'reconciling a node failed');
      }
    }
    // PGlite answers in this process, without I/O: the loop is let through here, not by the read.
    await new Promise((resolve) => setImmediate(resolve));
    return true;
  }

  private async reconcileNode(node: Node) {
    const shouldRun = daemonShouldRun(node);
    // Asked before any restart: start() would make an empty volume and hide the loss (storage-lost.ts).
    if (shouldRun && !(await this.opts.runtime.storagePresent(node.id))) return this.storageLost(node);
    const actual = await this.opts.runtime.status(node.id);
    // Kubernetes bringing a pod back by itself is no failed restart: counting it would hold a real
    // repair after it (a StatefulSet deleted by hand) behind minutes of backoff.
    if (shouldRun && actual.state === 'starting' && actual.imageVersion === node.imageVersion) return;
    if (shouldRun && (actual.state !== 'running' || actual.imageVersion !== node.imageVersion)) {
      const backoff = this.restarts.get(node.id);
      if (backoff && Date.now() < backoff.notBefore) return;
      this.opts.log.info({ nodeId: node.id, was: actual.state }, 'starting a node daemon that should be running');
      await this.opts.runtime.start(specOf(node));
      // Every daemon start begins locked; a runtime that reports restarts says when one happened.
      if (!this.opts.runtime.reportsEveryRestart) await this.markLocked(node.id);
      const count = (backoff?.count ?? 0) + 1;
      const now = Date.now();
      this.restarts.set(node.id, { count, at: now, notBefore: now + Math.min(RESTART_BACKOFF_MAX_MS, 1000 * 2 ** count) });
    } else if (!shouldRun && actual.state === 'running') {
      this.opts.log.info({ nodeId: node.id, status: node.status }, 'stopping a node daemon that should not run');
      await this.opts.runtime.stop(node.id);
    } else if (shouldRun) {
      // A daemon that stayed up a while after its last restart is healthy again: forget its backoff.
      const backoff = this.restarts.get(node.id);
      if (backoff && Date.now() - backoff.at > HEALTHY_AFTER_MS) this.restarts.delete(node.id);
    }
  }

  /** The volume is gone: the node is STORAGE_LOST, and a daemon still running without its files is stopped. */
  private async storageLost(node: Node) {
    const marked = await markStorageLost(this.opts.db, node.id, { detectedBy: 'volume', reason: VOLUME_GONE });
    if (!marked) return;
    this.opts.log.warn({ nodeId: node.id }, 'node storage lost: its volume is gone; it waits for a recover');
    this.restarts.delete(node.id);
    await this.opts.runtime.stop(node.id);
  }

  /** Every daemon start begins locked (RLN semantics); automatic unlock follows where it is on. */
  private async markLocked(nodeId: string) {
    await this.opts.db.transaction(async (tx) => {
      const current = await lockNode(tx, nodeId);
      // Only a daemon that should be up: a build in progress or a stop changes the lock itself.
      if (!current || !daemonShouldRun(current)) return;
      if (!current.locked) await applyDecision(tx, current, decide({ type: 'daemonRestarted' }, current));
      // Also when the row said locked already (the user had locked it, or the service restarted
      // before an earlier automatic unlock ran): the new daemon is locked either way.
      await enqueueAutoUnlock(tx, current);
    });
  }
}
