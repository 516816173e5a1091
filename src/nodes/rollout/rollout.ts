// Rolling out a release: upgrades the nodes enrolled in a rollout a few at a time. A pass fills
// free slots (up to the rollout's concurrency) and runs in its caller's transaction whenever a
// slot may have opened: inside publish's and resume's transactions, and as the rollout pass job
// (pass-job.ts), which a build enqueues in its own transaction when it settles an upgrade
// of the rollout, or ends on a node the rollout is waiting for. Passes serialise on the rollout's
// row lock; candidate nodes are taken with SKIP LOCKED, so a pass never waits for a node another
// transaction holds. A pass that leaves nodes pending with none upgrading (each busy with a build
// of its own, or locked at that moment) says so (`waiting`): no upgrade will settle to ask for the
// next pass, so its caller asks for one later. Which candidates take the upgrade is the lifecycle
// table's to say (rolloutUpgrade in nodes/lifecycle.ts).
import type { Queryable } from '../../db/database.ts';
import { latestRelease } from '../../db/releases.ts';
import {
  countRolloutNodes,
  lockRollout,
  lockUpgradeCandidates,
  setRolloutNodes,
  skipPendingRolloutNodes,
  updateRollout,
  type RolloutNodeState,
} from '../../db/rollouts.ts';
import { enqueueRolloutUpgrades } from '../builds/enqueue-build.ts';
import { enqueueRolloutPass } from './enqueue-pass.ts';
import { decide, type RefusalCode } from '../lifecycle.ts';
import { changeNodes, type NodeChange } from '../transition.ts';
import type { Node } from '../../domain/nodes.ts';


// A PAUSED node is upgraded by its next start (startNode applies the latest version); a node
// refused for any other reason (destroyed, already on the version) has nothing left to do.
const DEFERS: RefusalCode = 'node_not_running';

export interface RolloutPass {
  /** Upgrades the pass started. */
  started: number;
  /** Nodes are left pending and none is upgrading: no settled upgrade will ask for the next pass. */
  waiting: boolean;
}

const NOTHING: RolloutPass = { started: 0, waiting: false };

/** How long a rollout left waiting (see RolloutPass.waiting) waits before its next pass looks again. */
export const WAITING_RECHECK_MS = 5_000;

/** A pass, and when it leaves the rollout waiting, another asked for (as `askedBy`) a little later. */
export async function runRolloutPass(tx: Queryable, version: string, askedBy: string): Promise<RolloutPass> {
  const pass = await advanceRollout(tx, version);
  if (pass.waiting) await enqueueRolloutPass(tx, version, askedBy, WAITING_RECHECK_MS);
  return pass;
}

/**
 * How many upgrades may be under way at once: the rollout's concurrency, but never more than could
 * all fail without a failure past the one that pauses the rollout, plus one for each upgrade that
 * succeeded. A bad release thus fails at most `failure_budget + 1` nodes, whatever the
 * concurrency; a good one starts with that many and doubles its pace with each round of successes
 * until it reaches the concurrency (a fleet's rollout can run hundreds at once safely).
 */
export function inFlightLimit(
  rollout: { concurrency: number; failure_budget: number },
  counts: Pick<Record<RolloutNodeState, number>, 'failed' | 'succeeded'>,
): number {
  return Math.min(rollout.concurrency, Math.max(0, rollout.failure_budget - counts.failed + 1) + counts.succeeded);
}

export async function advanceRollout(tx: Queryable, version: string): Promise<RolloutPass> {
  const rollout = await lockRollout(tx, version);
  if (!rollout || rollout.state !== 'running') return NOTHING;
  const counts = await countRolloutNodes(tx, version);

  if (counts.failed > rollout.failure_budget) {
    await updateRollout(tx, version, {
      state: 'paused',
      paused_reason: `${counts.failed} upgrades failed, more than the failure budget of ${rollout.failure_budget}`,
    });
    return NOTHING;
  }
  const latest = await latestRelease(tx);
  if (latest && latest.version !== version) {
    // A newer release has its own rollout; moving nodes to this one first would be wasted work.
    await skipPendingRolloutNodes(tx, version, `superseded by ${latest.version}`);
    if (counts.upgrading === 0) await updateRollout(tx, version, { state: 'completed' });
    return NOTHING;
  }

  let started = 0;
  let free = inFlightLimit(rollout, counts) - counts.upgrading;
  while (free > 0) {
    const batch = await lockUpgradeCandidates(tx, version, free);
    if (batch.length === 0) break;
    const skipped: Node[] = [];
    const deferred: Node[] = [];
    const upgrade: Array<{ before: Node; change: NodeChange }> = [];
    for (const node of batch) {
      const decision = decide({ type: 'rolloutUpgrade', toVersion: version }, node);
      if (decision.outcome === 'change') upgrade.push({ before: node, change: decision.change });
      else if (decision.outcome === 'refused' && decision.refusal.code === DEFERS) deferred.push(node);
      else skipped.push(node);
    }
    await setRolloutNodes(tx, version, 'skipped', skipped.map((n) => ({ nodeId: n.id })));
    await setRolloutNodes(tx, version, 'deferred', deferred.map((n) => ({ nodeId: n.id })));
    const builds = upgrade.length === 0 ? [] : await enqueueRolloutUpgrades(tx, await changeNodes(tx, upgrade), version);
    await setRolloutNodes(tx, version, 'upgrading', builds.map((b) => ({ nodeId: b.nodeId, buildNumber: b.buildNumber })));
    started += builds.length;
    free -= builds.length;
  }
  if (started === 0 && counts.upgrading === 0) {
    const now = await countRolloutNodes(tx, version);
    if (now.pending === 0 && now.upgrading === 0) await updateRollout(tx, version, { state: 'completed' });
    return { started, waiting: now.pending > 0 && now.upgrading === 0 };
  }
  return { started, waiting: false };
}
