// Turning RLN's authentication on for nodes whose daemon was started without it (issue #40, point
// 5). A daemon keeps the command line it was started with, so a node started before root keys
// existed answers without authentication until it restarts; on the process runtime every restart of
// the service restarts its daemons, but a Kubernetes pod runs on. This rollout restarts them like a
// release's rollout upgrades nodes: a few at a time, pacing by inFlightLimit (rollout.ts), pausing
// past its failure budget, each restart a `restart` build (the node comes back locked, and automatic
// unlock follows where it is on). Passes run in their caller's transaction (start, resume) and as
// the authentication rollout pass job, which a restart build asks for as it settles.
import type { Queryable } from '../../db/database.ts';
import { insertJob } from '../../db/jobs.ts';
import {
  countAuthenticationRolloutNodes,
  lockAuthenticationRollout,
  lockRestartCandidates,
  setAuthenticationRolloutNodes,
  updateAuthenticationRollout,
} from '../../db/authentication-rollout.ts';
import { AUTHENTICATION_ROLLOUT_PASS_JOB } from '../../jobs/catalog.ts';
import type { Node } from '../../domain/nodes.ts';
import { enqueueBuilds } from '../builds/enqueue-build.ts';
import { decide } from '../lifecycle.ts';
import { changeNodes, type NodeChange } from '../transition.ts';
import { inFlightLimit, WAITING_RECHECK_MS, type RolloutPass } from './rollout.ts';

/** Asks, in the caller's transaction, for a pass of the authentication rollout (after `delayMs`, if given). */
export async function enqueueAuthenticationRolloutPass(tx: Queryable, askedBy: string, delayMs?: number) {
  await insertJob(tx, { ...AUTHENTICATION_ROLLOUT_PASS_JOB.newJob({ v: 1, askedBy }), delayMs });
}

/** A pass, and when it leaves the rollout waiting on busy nodes, another asked for a little later. */
export async function runAuthenticationRolloutPass(tx: Queryable, askedBy: string): Promise<RolloutPass> {
  const pass = await advanceAuthenticationRollout(tx);
  if (pass.waiting) await enqueueAuthenticationRolloutPass(tx, askedBy, WAITING_RECHECK_MS);
  return pass;
}

export async function advanceAuthenticationRollout(tx: Queryable): Promise<RolloutPass> {
  const rollout = await lockAuthenticationRollout(tx);
  if (!rollout || rollout.state !== 'running') return { started: 0, waiting: false };
  const counts = await countAuthenticationRolloutNodes(tx);
  if (counts.failed > rollout.failure_budget) {
    await updateAuthenticationRollout(tx, {
      state: 'paused',
      paused_reason: `${counts.failed} restarts failed, more than the failure budget of ${rollout.failure_budget}`,
    });
    return { started: 0, waiting: false };
  }

  let started = 0;
  let free = inFlightLimit(rollout, counts) - counts.restarting;
  while (free > 0) {
    const batch = await lockRestartCandidates(tx, free);
    if (batch.length === 0) break;
    const skipped: Array<{ nodeId: string; reason: string }> = [];
    const restart: Array<{ before: Node; change: NodeChange }> = [];
    for (const node of batch) {
      const decision = decide({ type: 'authenticationRestart' }, node);
      if (decision.outcome === 'change') restart.push({ before: node, change: decision.change });
      else skipped.push({ nodeId: node.id, reason: decision.outcome === 'refused' ? decision.refusal.message : 'nothing to restart' });
    }
    await setAuthenticationRolloutNodes(tx, 'skipped', skipped);
    const changed = restart.length === 0 ? [] : await changeNodes(tx, restart);
    const builds = await enqueueBuilds(tx, changed, 'restart', (n) => n.imageVersion);
    await setAuthenticationRolloutNodes(tx, 'restarting', builds.map((b) => ({ nodeId: b.nodeId, buildNumber: b.buildNumber })));
    started += builds.length;
    free -= builds.length;
  }
  if (started === 0 && counts.restarting === 0) {
    const now = await countAuthenticationRolloutNodes(tx);
    if (now.pending === 0 && now.restarting === 0) await updateAuthenticationRollout(tx, { state: 'completed' });
    return { started, waiting: now.pending > 0 && now.restarting === 0 };
  }
  return { started, waiting: false };
}
