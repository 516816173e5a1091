// Rolling out a release: upgrades the nodes enrolled in a rollout a few at a time. A pass fills
// free slots (up to the rollout's concurrency) and is run whenever a slot may have opened: at
// publish, when an upgrade build finishes (in that build's completing transaction), and
// periodically from the reconcile loop, which is also how a rollout resumes after a restart.
// Passes serialise on the rollout's row lock; candidate nodes are taken with SKIP LOCKED, so a
// pass never waits for a node another transaction holds.
import type { Queryable } from '../db/database.ts';
import { latestRelease } from '../db/releases.ts';
import {
  countRolloutNodes,
  lockRollout,
  lockUpgradeCandidates,
  setRolloutNode,
  skipPendingRolloutNodes,
  updateRollout,
} from '../db/rollouts.ts';
import { beginUpgrade } from '../nodes/enqueue-build.ts';

/** Returns how many upgrades the pass started (the caller wakes its workers when > 0). */
export async function advanceRollout(tx: Queryable, version: string): Promise<number> {
  const rollout = await lockRollout(tx, version);
  if (!rollout || rollout.state !== 'running') return 0;
  const counts = await countRolloutNodes(tx, version);

  if (counts.failed > rollout.failure_budget) {
    await updateRollout(tx, version, {
      state: 'paused',
      paused_reason: `${counts.failed} upgrades failed, more than the failure budget of ${rollout.failure_budget}`,
    });
    return 0;
  }
  const latest = await latestRelease(tx);
  if (latest && latest.version !== version) {
    // A newer release has its own rollout; moving nodes to this one first would be wasted work.
    await skipPendingRolloutNodes(tx, version, `superseded by ${latest.version}`);
    if (counts.upgrading === 0) await updateRollout(tx, version, { state: 'completed' });
    return 0;
  }

  let started = 0;
  let free = rollout.concurrency - counts.upgrading;
  while (free > 0) {
    const batch = await lockUpgradeCandidates(tx, version, free);
    if (batch.length === 0) break;
    for (const node of batch) {
      if (node.status === 'DESTROYING' || node.status === 'DESTROYED' || node.image_version === version) {
        await setRolloutNode(tx, version, node.id, 'skipped');
      } else if (node.status === 'PAUSED') {
        await setRolloutNode(tx, version, node.id, 'deferred');
      } else {
        const build = await beginUpgrade(tx, node, version);
        await setRolloutNode(tx, version, node.id, 'upgrading', { buildNumber: build.build_number });
        started++;
        free--;
      }
    }
  }
  if (started === 0 && counts.upgrading === 0) {
    const now = await countRolloutNodes(tx, version);
    if (now.pending === 0 && now.upgrading === 0) await updateRollout(tx, version, { state: 'completed' });
  }
  return started;
}
