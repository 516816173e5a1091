// Recording a build and enqueueing the job that carries it out, in the caller's transaction: a
// build exists exactly when its job does, so a crash can never leave one without the other.
import type { Queryable } from '../db/database.ts';
import { insertBuild, type BuildAction, type BuildRow } from '../db/builds.ts';
import { insertJob } from '../db/jobs.ts';
import type { NodeRow } from '../db/nodes.ts';
import { BUILD_JOB, buildJobKey, type BuildJobPayload } from './build-job.ts';
import { changeNode } from './transition.ts';

export async function enqueueBuild(tx: Queryable, node: NodeRow, action: BuildAction, imageVersion: string): Promise<BuildRow> {
  const build = await insertBuild(tx, {
    nodeId: node.id,
    action,
    imageVersion,
    previousImageVersion: node.image_version,
  });
  const payload: BuildJobPayload = { v: 1, nodeId: node.id, buildNumber: build.build_number };
  await insertJob(tx, {
    kind: BUILD_JOB.kind,
    payload,
    singletonKey: buildJobKey(payload),
    maxAttempts: BUILD_JOB.maxAttempts,
  });
  return build;
}

/**
 * Starts replacing a node's image: IN_PROGRESS and locked from now on. Used by the upgrade
 * endpoint and by release rollouts; the caller holds the node's row lock and has checked that
 * no build is in progress.
 */
export async function beginUpgrade(tx: Queryable, node: NodeRow, version: string): Promise<BuildRow> {
  const after = await changeNode(tx, node, { status: 'IN_PROGRESS', locked: true });
  return enqueueBuild(tx, after, 'upgrade', version);
}
