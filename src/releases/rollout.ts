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
  setRolloutNodes,
  skipPendingRolloutNodes,
  updateRollout,
} from '../db/rollouts.ts';
import { beginUpgrades } from '../nodes/enqueue-build.ts';

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
    const done = batch.filter((n) => n.status === 'DESTROYING' || n.status === 'DESTROYED' || n.image_version === version);
    const paused = batch.filter((n) => n.status === 'PAUSED' && !done.includes(n));
    const upgrade = batch.filter((n) => !done.includes(n) && !paused.includes(n));
    await setRolloutNodes(tx, version, 'skipped', done.map((n) => ({ nodeId: n.id })));
    await setRolloutNodes(tx, version, 'deferred', paused.map((n) => ({ nodeId: n.id })));
    const builds = await beginUpgrades(tx, upgrade, version);
    await setRolloutNodes(tx, version, 'upgrading', builds.map((b) => ({ nodeId: b.node_id, buildNumber: b.build_number })));
    started += builds.length;
    free -= builds.length;
  }
  if (started === 0 && counts.upgrading === 0) {
    const now = await countRolloutNodes(tx, version);
    if (now.pending === 0 && now.upgrading === 0) await updateRollout(tx, version, { state: 'completed' });
  }
  return started;
}
