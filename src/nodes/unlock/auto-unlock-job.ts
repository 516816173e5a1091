// The durable job that unlocks a node with automatic unlock after its daemon (re)started. Enqueued
// in the transaction that records the start: a start, upgrade or rollback build succeeding
// (build-job.ts) and the reconcile loop restarting a daemon or seeing it restarted (reconcile.ts),
// which also covers a restart of the whole service. A new node is left out by nature: it has no
// wallet, so it cannot have automatic unlock on.
import type { Queryable } from '../../db/database.ts';
import { insertJob } from '../../db/jobs.ts';
import { exponentialBackoff, type JobDefinition } from '../../jobs/worker.ts';
import type { Database } from '../../db/database.ts';
import { findNode } from '../../db/nodes.ts';
import type { Logger } from '../../logger.ts';
import type { AutoUnlockService } from './auto-unlock.ts';
import { daemonShouldRun } from '../lifecycle.ts';
import type { Node } from '../../domain/nodes.ts';
import { AUTO_UNLOCK_JOB, type AutoUnlockJobPayload } from '../../jobs/catalog.ts';

/** After a daemon start recorded on `node` (as it is now): an unlock follows when it has automatic unlock on. */
export async function enqueueAutoUnlock(tx: Queryable, node: Node): Promise<void> {
  if (node.autoUnlockSealed !== null && daemonShouldRun(node)) await insertJob(tx, AUTO_UNLOCK_JOB.newJob({ v: 1, nodeId: node.id }));
}

/**
 * What a part that left a node locked asks for (a backup that locked the node and could not unlock it
 * again, or one interrupted): the node's automatic unlock, when it has one on.
 */
export class AutoUnlockRequests {
  constructor(private readonly db: Database) {}

  async afterLeftLocked(nodeId: string): Promise<void> {
    const node = await findNode(this.db, nodeId);
    if (node) await enqueueAutoUnlock(this.db, node);
  }
}

export function autoUnlockJob(deps: { autoUnlock: Pick<AutoUnlockService, 'unlockAfterStart'>; log: Logger }): JobDefinition<AutoUnlockJobPayload> {
  return {
    ...AUTO_UNLOCK_JOB,
    // RLN's unlock syncs before it answers (up to NODE_API_TIMEOUT_MS); the lease is renewed meanwhile.
    leaseMs: 30_000,
    // The daemon may still be starting (a reconcile restart enqueues as it spawns it).
    backoffMs: exponentialBackoff(1_000, 60_000),
    async handle(p) {
      const result = await deps.autoUnlock.unlockAfterStart(p.nodeId);
      if (result !== 'nothing to do') deps.log.info({ nodeId: p.nodeId, result }, 'automatic unlock');
    },
    async onGiveUp(p, error) {
      deps.log.warn({ nodeId: p.nodeId, err: error.message }, 'automatic unlock gave up; the node stays locked until it is unlocked by hand or starts again');
    },
  };
}
