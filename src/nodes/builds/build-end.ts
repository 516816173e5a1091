// Closing builds: each build's outcome is applied to its node (as the lifecycle table says), with
// the events it causes, in one transaction for any number of builds. The build job ends one; a
// batch of a rollout's upgrades (rollout/upgrades-job.ts) ends together, so a thousand upgrades
// cost a few dozen transactions, not a thousand.
import type { Queryable } from '../../db/database.ts';
import { buildKey, finishBuilds } from '../../db/builds.ts';
import { lockNodes } from '../../db/nodes.ts';
import { settleRolloutNodes } from '../../db/rollouts.ts';
import type { NodeEventInput } from '../../db/node-events.ts';
import type { Build, Node } from '../../domain/nodes.ts';
import { decide, refusalError, type NodeRequest } from '../lifecycle.ts';
import { changeNodes, type NodeChange } from '../transition.ts';
import { enqueueAutoUnlock } from '../unlock/auto-unlock-job.ts';
import { enqueueRolloutPass } from '../rollout/enqueue-pass.ts';
import { settleAuthenticationRolloutNodes } from '../../db/authentication-rollout.ts';
import { enqueueAuthenticationRolloutPass } from '../rollout/authentication-rollout.ts';
import type { BuildJobDeps } from './build-job.ts';

/** How a build ended: its status, what happened to the node (the lifecycle table's name), and why it failed. */
export interface BuildEnd {
  outcome: 'SUCCESS' | 'FAILURE';
  happened: NodeRequest;
  error?: string;
}

type Which = Pick<Build, 'nodeId' | 'buildNumber'>;

/** Whether a build moves the node to another image version (an upgrade, or a start that applies one). */
export const changesImage = (b: Build) => (b.action === 'upgrade' || b.action === 'start') && b.imageVersion !== b.previousImageVersion;

/**
 * Closes the builds and applies their outcomes to their nodes, atomically, with the events they
 * cause. An upgrade a rollout was waiting for is settled in its rollout and the rollout's next
 * pass asked for in the same transaction (rollout/enqueue-pass.ts): a job row, no lock on the rollout,
 * so builds finishing together never queue on it. A build already closed (by an earlier attempt
 * that crashed before its job was marked done) is left out.
 */
export async function endBuilds(deps: Pick<BuildJobDeps, 'db' | 'metrics'>, ends: Array<{ which: Which; end: BuildEnd }>) {
  const endOf = new Map(ends.map(({ which, end }) => [buildKey(which), end]));
  const finished = await deps.db.transaction(async (tx) => {
    const nodes = new Map((await lockNodes(tx, [...new Set(ends.map((e) => e.which.nodeId))])).map((n) => [n.id, n]));
    const builds = await finishBuilds(
      tx,
      ends.map(({ which, end }) => ({ nodeId: which.nodeId, buildNumber: which.buildNumber, status: end.outcome, error: end.error })),
    );
    const changes: Array<{ before: Node; change: NodeChange; alsoRecord?: (after: Node) => NodeEventInput[]; happened: NodeRequest }> = [];
    // Each node as it is afterwards, with what happened to it.
    const after: Array<{ happened: NodeRequest; node: Node }> = [];
    const settled: Parameters<typeof settleRolloutNodes>[1] = [];
    const restarts: Parameters<typeof settleAuthenticationRolloutNodes>[1] = [];
    const closed: Build[] = [];
    for (const build of builds) {
      const node = nodes.get(build.nodeId);
      const end = endOf.get(buildKey(build))!;
      if (!node) continue; // purged meanwhile: nothing to apply, nothing to count
      closed.push(build);
      const decision = decide(end.happened, node);
      if (decision.outcome === 'refused') throw refusalError(decision.refusal);
      const outcome = end.outcome === 'SUCCESS' ? 'succeeded' : 'failed';
      if (decision.outcome === 'no change') after.push({ happened: end.happened, node });
      else {
        const alsoRecord = (changed: Node) => [
          ...(changesImage(build) ? [upgradeEvent(changed, build, outcome, end.error)] : []),
          // A start or upgrade that found the node's volume gone (build-job.ts): said as the reconcile loop says it.
          ...(end.happened.type === 'storageLost' ? [{ node: changed, eventType: 'NODE_STORAGE_LOST' as const, details: { detectedBy: 'volume', reason: end.error } }] : []),
        ];
        changes.push({ before: node, change: decision.change, alsoRecord, happened: end.happened });
      }
      if (changesImage(build)) settled.push({ version: build.imageVersion, nodeId: node.id, outcome, error: end.error });
      if (build.action === 'restart') restarts.push({ nodeId: node.id, outcome, error: end.error });
    }
    (await changeNodes(tx, changes)).forEach((node, i) => after.push({ happened: changes[i]!.happened, node }));
    for (const { happened, node } of after) await daemonStarted(tx, happened, node);
    for (const version of await settleRolloutNodes(tx, settled)) {
      // One request per batch: its first build names it (rollout/pass-job.ts coalesces the rest).
      await enqueueRolloutPass(tx, version, `build:${closed[0]!.nodeId}:${closed[0]!.buildNumber}`);
    }
    if (await settleAuthenticationRolloutNodes(tx, restarts)) {
      const first = closed.find((b) => b.action === 'restart')!;
      await enqueueAuthenticationRolloutPass(tx, `build:${first.nodeId}:${first.buildNumber}`);
    }
    return closed;
  });
  // Counted once committed, so a build is counted once whichever attempt or replica finished it.
  for (const build of finished) {
    const seconds = Math.max(0, (build.finishedAt ?? build.startedAt).getTime() - build.startedAt.getTime()) / 1000;
    deps.metrics?.buildFinished(build.action, endOf.get(buildKey(build))!.outcome === 'SUCCESS' ? 'success' : 'failure', seconds);
  }
}

/** A build that (re)started the daemon left it locked: automatic unlock follows, where it is on. */
async function daemonStarted(tx: Queryable, happened: NodeRequest, node: Node) {
  if (happened.type === 'startBuildSucceeded' || happened.type === 'upgradeRolledBack') await enqueueAutoUnlock(tx, node);
}

/** What the user is told about an image change (the rollout learns it through settleRolloutNodes). */
function upgradeEvent(node: Node, build: Build, outcome: 'succeeded' | 'failed', error?: string): NodeEventInput {
  const versions = { fromVersion: build.previousImageVersion, toVersion: build.imageVersion };
  return outcome === 'succeeded'
    ? { node, eventType: 'NODE_UPGRADE_COMPLETED', details: versions }
    : { node, eventType: 'NODE_UPGRADE_FAILED', details: { ...versions, reason: error, status: node.status, runningVersion: node.imageVersion } };
}
