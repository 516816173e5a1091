// Recording builds and enqueueing the jobs that carry them out, in the caller's transaction: a
// build exists exactly when its job does, so a crash can never leave one without the other.
// Written for many nodes at once; the single-node form uses the same statements. A rollout's
// upgrades are carried out in batches, a job for many builds (still a build exactly when its job).
// What the node becomes meanwhile is the lifecycle table's to say (decide() in lifecycle.ts).
import type { Queryable } from '../../db/database.ts';
import { insertBuilds } from '../../db/builds.ts';
import type { Build, BuildAction, Node } from '../../domain/nodes.ts';
import { insertJobs } from '../../db/jobs.ts';
import { BUILD_JOB, ROLLOUT_UPGRADES_JOB, UPGRADE_BATCH_SIZE } from '../../jobs/catalog.ts';

export async function enqueueBuild(tx: Queryable, node: Node, action: BuildAction, imageVersion: string): Promise<Build> {
  return (await enqueueBuilds(tx, [node], action, imageVersion))[0]!;
}

/** `imageVersion`: the one all the builds take, or each node's own (a restart keeps it). */
export async function enqueueBuilds(tx: Queryable, nodes: Node[], action: BuildAction, imageVersion: string | ((node: Node) => string)): Promise<Build[]> {
  if (nodes.length === 0) return [];
  const versionOf = typeof imageVersion === 'string' ? () => imageVersion : imageVersion;
  const builds = await insertBuilds(
    tx,
    nodes.map((n) => ({ nodeId: n.id, action, imageVersion: versionOf(n), previousImageVersion: n.imageVersion })),
  );
  await insertJobs(
    tx,
    builds.map((b) => BUILD_JOB.newJob({ v: 1, nodeId: b.nodeId, buildNumber: b.buildNumber })),
  );
  return builds;
}

/**
 * A rollout's upgrades of these nodes to `version`: a build each, carried out together by one job
 * per UPGRADE_BATCH_SIZE builds (rollout/upgrades-job.ts).
 */
export async function enqueueRolloutUpgrades(tx: Queryable, nodes: Node[], version: string): Promise<Build[]> {
  const builds = await insertBuilds(
    tx,
    nodes.map((n) => ({ nodeId: n.id, action: 'upgrade', imageVersion: version, previousImageVersion: n.imageVersion })),
  );
  const batches: Build[][] = [];
  for (let i = 0; i < builds.length; i += UPGRADE_BATCH_SIZE) batches.push(builds.slice(i, i + UPGRADE_BATCH_SIZE));
  await insertJobs(
    tx,
    batches.map((batch) => ROLLOUT_UPGRADES_JOB.newJob({ v: 1, version, builds: batch.map((b) => ({ nodeId: b.nodeId, buildNumber: b.buildNumber })) })),
  );
  return builds;
}
