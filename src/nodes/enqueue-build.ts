// Recording builds and enqueueing the jobs that carry them out, in the caller's transaction: a
// build exists exactly when its job does, so a crash can never leave one without the other.
// Written for many nodes at once (a rollout pass); the single-node form uses the same statements.
// What the node becomes meanwhile is the lifecycle table's to say (decide() in lifecycle.ts).
import type { Queryable } from '../db/database.ts';
import { insertBuilds, type BuildRow } from '../db/builds.ts';
import type { BuildAction, Node } from '../domain/nodes.ts';
import { insertJobs } from '../db/jobs.ts';
import { BUILD_JOB } from './build-job.ts';

export async function enqueueBuild(tx: Queryable, node: Node, action: BuildAction, imageVersion: string): Promise<BuildRow> {
  return (await enqueueBuilds(tx, [node], action, imageVersion))[0]!;
}

export async function enqueueBuilds(tx: Queryable, nodes: Node[], action: BuildAction, imageVersion: string): Promise<BuildRow[]> {
  const builds = await insertBuilds(
    tx,
    nodes.map((n) => ({ nodeId: n.id, action, imageVersion, previousImageVersion: n.imageVersion })),
  );
  await insertJobs(
    tx,
    builds.map((b) => BUILD_JOB.newJob({ v: 1, nodeId: b.node_id, buildNumber: b.build_number })),
  );
  return builds;
}
