// Recording builds and enqueueing the jobs that carry them out, in the caller's transaction: a
// build exists exactly when its job does, so a crash can never leave one without the other.
// Written for many nodes at once (a rollout pass); the single-node forms use the same statements.
import type { Queryable } from '../db/database.ts';
import { insertBuilds, type BuildAction, type BuildRow } from '../db/builds.ts';
import { insertJobs } from '../db/jobs.ts';
import type { NodeRow } from '../db/nodes.ts';
import { recordNodeEvents, type NodeEventInput } from '../events/record.ts';
import { BUILD_JOB } from './build-job.ts';

export async function enqueueBuild(tx: Queryable, node: NodeRow, action: BuildAction, imageVersion: string): Promise<BuildRow> {
  return (await enqueueBuilds(tx, [node], action, imageVersion))[0]!;
}

export async function enqueueBuilds(tx: Queryable, nodes: NodeRow[], action: BuildAction, imageVersion: string): Promise<BuildRow[]> {
  const builds = await insertBuilds(
    tx,
    nodes.map((n) => ({ nodeId: n.id, action, imageVersion, previousImageVersion: n.image_version })),
  );
  await insertJobs(
    tx,
    builds.map((b) => BUILD_JOB.newJob({ v: 1, nodeId: b.node_id, buildNumber: b.build_number })),
  );
  return builds;
}

export async function beginUpgrade(tx: Queryable, node: NodeRow, version: string): Promise<BuildRow> {
  return (await beginUpgrades(tx, [node], version))[0]!;
}

/**
 * Starts replacing the image of nodes: IN_PROGRESS and locked from now on, with the events that
 * change causes (what changeNode records, for this one transition, in bulk). Used by the upgrade
 * endpoint and by rollout passes; the caller holds the nodes' row locks and has checked that no
 * build is in progress.
 */
export async function beginUpgrades(tx: Queryable, nodes: NodeRow[], version: string): Promise<BuildRow[]> {
  if (nodes.length === 0) return [];
  await tx.query(`UPDATE nodes SET status = 'IN_PROGRESS', locked = true, updated_at = now() WHERE id = ANY($1)`, [nodes.map((n) => n.id)]);
  const events: NodeEventInput[] = [];
  for (const n of nodes) {
    if (n.status !== 'IN_PROGRESS') {
      events.push({ node: n, eventType: 'NODE_STATUS_UPDATED', details: { status: 'IN_PROGRESS', previousStatus: n.status } });
    }
    if (!n.locked) events.push({ node: n, eventType: 'NODE_LOCKED', details: { locked: true } });
  }
  await recordNodeEvents(tx, events);
  return enqueueBuilds(tx, nodes, 'upgrade', version);
}
