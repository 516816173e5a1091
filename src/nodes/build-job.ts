// The durable job that carries out one build. Every step is idempotent: after a crash at any
// point the job runs again from the top and converges on the same result.
import { Type } from '@sinclair/typebox';
import type { Database, Queryable } from '../db/database.ts';
import { findBuild, finishBuild, setBuildPhase, type BuildRow } from '../db/builds.ts';
import { findNode, lockNode } from '../db/nodes.ts';
import { settleRolloutNode } from '../db/rollouts.ts';
import type { NodeEventInput } from '../db/node-events.ts';
import type { BuildAction, BuildStep, Node } from '../domain/nodes.ts';
import { applyDecision } from './transition.ts';
import { decide, type NodeRequest } from './lifecycle.ts';
import type { Logger } from '../logger.ts';
import type { NodeEndpoint, NodeRuntime, NodeSpec } from '../runtime/types.ts';
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import { declareJob } from '../jobs/job-declaration.ts';
import { waitForDaemon } from './daemon-health.ts';
import type { RlnClient } from '../rln/client.ts';
import { enqueueAutoUnlock } from './auto-unlock-job.ts';
import { enqueueRolloutPass } from './rollout-pass-job.ts';

export const BUILD_JOB = declareJob({
  kind: 'node.build',
  maxAttempts: 3,
  payload: Type.Object({ v: Type.Literal(1), nodeId: Type.String(), buildNumber: Type.Number() }),
  singletonKey: (p) => `build:${p.nodeId}:${p.buildNumber}`,
});
export type BuildJobPayload = ReturnType<typeof BUILD_JOB.parse>;

export interface BuildJobDeps {
  db: Database;
  runtime: NodeRuntime;
  nodeStartTimeoutMs: number;
  /** Asks a started daemon whether it answers yet. */
  rln: Pick<RlnClient, 'answers'>;
  log: Logger;
  /** Restores the backup a node was created from (backups/restore-into-node.ts); absent: no restores. */
  restorer?: BuildRestorer;
  /** Told of every build that finished (metrics/); absent: nobody counts. */
  metrics?: BuildMetrics;
}

/** What the build reports of itself; implemented by metrics/service-metrics.ts. */
export interface BuildMetrics {
  /** `seconds`: from the build's request to its end, by the database's clock (retries included). */
  buildFinished(action: BuildAction, result: 'success' | 'failure', seconds: number): void;
}

/** What a create build asks of restores; implemented by backups/restore-into-node.ts. */
export interface BuildRestorer {
  /**
   * Restores the node's pending backup, if any: {failed} ends the build, a throw retries it.
   * `restoring` is called once it knows there is a backup to restore (the build's phase).
   */
  restorePending(node: Node, endpoint: NodeEndpoint, restoring?: () => Promise<void>): Promise<{ restored: boolean } | { failed: string }>;
  /** The build gave up: whatever the restore kept (its sealed password) goes. */
  abandon(nodeId: string, reason: string): Promise<void>;
}

export const specOf = (node: Node, imageVersion = node.imageVersion): NodeSpec => ({
  nodeId: node.id,
  network: node.network,
  imageVersion,
  restPort: node.restPort,
  peerPort: node.peerPort,
});

export function buildJob(deps: BuildJobDeps): JobDefinition<BuildJobPayload> {
  return {
    ...BUILD_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(1_000, 30_000),
    async handle(p, job) {
      const node = await findNode(deps.db, p.nodeId);
      const build = await findBuild(deps.db, p.nodeId, p.buildNumber);
      if (!node || !build || build.status !== 'IN_PROGRESS') return; // done before a crash, or node purged
      const log = deps.log.child({ nodeId: node.id, build: build.build_number, action: build.action });
      log.info({ attempt: job.attempts }, 'build running');
      await carryOut(deps, node, build, job.attempts > 1);
      log.info('build succeeded');
    },
    async onGiveUp(p, error) {
      // A node created from a backup: the sealed password is erased with the build's end.
      await deps.restorer?.abandon(p.nodeId, error.message);
      await finish(deps, { node_id: p.nodeId, build_number: p.buildNumber }, 'FAILURE', { type: 'buildFailed' }, error.message);
    },
  };
}

/** Whether a build moves the node to another image version (an upgrade, or a start that applies one). */
const changesImage = (b: BuildRow) => (b.action === 'upgrade' || b.action === 'start') && b.image_version !== b.previous_image_version;

async function carryOut(deps: BuildJobDeps, node: Node, build: BuildRow, isRetry: boolean) {
  const { runtime } = deps;
  if (changesImage(build)) return replaceImage(deps, node, build);
  const spec = specOf(node, build.image_version);
  const step = (phase: BuildStep) => enterPhase(deps, build, phase);
  switch (build.action) {
    case 'create':
    case 'start':
    case 'upgrade': {
      await step('PROVISIONING');
      // A retry starts from a clean process: the last attempt's daemon may be up but wedged.
      if (isRetry) await runtime.stop(node.id);
      await runtime.provision(spec);
      await step('STARTING_DAEMON');
      await runtime.start(spec);
      await step('WAITING_FOR_DAEMON');
      await waitUntilAnswering(deps, spec);
      if (build.action === 'create' && deps.restorer) {
        const restore = await deps.restorer.restorePending(node, runtime.endpoint(spec), () => step('RESTORING_BACKUP'));
        // A wrong password or a corrupt file: the node is FAILED with the reason, never RUNNING without its wallet.
        if ('failed' in restore) return finish(deps, build, 'FAILURE', { type: 'buildFailed' }, `restore failed: ${restore.failed}`);
      }
      await finish(deps, build, 'SUCCESS', { type: 'startBuildSucceeded', peer: deps.runtime.peerAddress(node.id) });
      return;
    }
    case 'stop': {
      await step('STOPPING_DAEMON');
      await runtime.stop(node.id);
      await finish(deps, build, 'SUCCESS', { type: 'stopBuildSucceeded' });
      return;
    }
    case 'destroy': {
      await step('DESTROYING');
      await runtime.destroy(node.id);
      await finish(deps, build, 'SUCCESS', { type: 'destroyBuildSucceeded' });
      return;
    }
  }
}

/** Tells users what the build is doing now (Build.currentPhase). */
async function enterPhase(deps: BuildJobDeps, build: BuildRow, phase: BuildStep) {
  await setBuildPhase(deps.db, build.node_id, build.build_number, phase);
}

/**
 * Moves a node to the build's image version, keeping its storage. If the new version does not
 * come up healthy the previous one is brought back: the build is a FAILURE with the reason and
 * the node RUNNING (locked) on its old version; only if that fails too is the node FAILED.
 */
async function replaceImage(deps: BuildJobDeps, node: Node, build: BuildRow) {
  const target = specOf(node, build.image_version);
  try {
    await enterPhase(deps, build, 'PROVISIONING');
    await deps.runtime.provision(target);
    await enterPhase(deps, build, 'REPLACING_IMAGE');
    await deps.runtime.replaceImage(target);
    await enterPhase(deps, build, 'WAITING_FOR_DAEMON');
    await waitUntilAnswering(deps, target);
  } catch (err) {
    const previous = build.previous_image_version ?? node.imageVersion;
    const reason = `version ${build.image_version} did not come up healthy: ${(err as Error).message}`;
    deps.log.warn({ nodeId: node.id, build: build.build_number, reason }, 'rolling back to the previous version');
    try {
      await enterPhase(deps, build, 'ROLLING_BACK');
      const back = specOf(node, previous);
      await deps.runtime.replaceImage(back);
      await waitUntilAnswering(deps, back);
    } catch (rollbackErr) {
      const error = `${reason}; rolling back to ${previous} failed too: ${(rollbackErr as Error).message}`;
      await finish(deps, build, 'FAILURE', { type: 'buildFailed' }, error);
      return;
    }
    await finish(deps, build, 'FAILURE', { type: 'upgradeRolledBack', imageVersion: previous }, `${reason}; rolled back to ${previous}`);
    return;
  }
  await finish(deps, build, 'SUCCESS', { type: 'startBuildSucceeded', imageVersion: build.image_version, peer: deps.runtime.peerAddress(node.id) });
}

async function waitUntilAnswering(deps: BuildJobDeps, spec: NodeSpec) {
  try {
    await deps.runtime.awaitRunning(spec, deps.nodeStartTimeoutMs);
    await waitForDaemon(deps.rln, deps.runtime.endpoint(spec), deps.nodeStartTimeoutMs, async () => {
      return (await deps.runtime.status(spec.nodeId)).state !== 'running';
    });
  } catch (err) {
    const tail = (await deps.runtime.tailLog(spec.nodeId, 600)).trim().split('\n').slice(-3).join(' | ');
    throw new Error(`${(err as Error).message}${tail ? `; last log lines: ${tail}` : ''}`);
  }
}

/**
 * Closes the build and applies its outcome (`happened`, as the lifecycle table names it) to the
 * node, atomically, with the events it causes. An upgrade a rollout was waiting for is settled in
 * its rollout and the rollout's next pass asked for in the same transaction (nodes/rollout-pass-job.ts):
 * a job row, no lock on the rollout, so builds finishing together never queue on it.
 */
async function finish(
  deps: BuildJobDeps,
  which: Pick<BuildRow, 'node_id' | 'build_number'>,
  outcome: 'SUCCESS' | 'FAILURE',
  happened: NodeRequest,
  error?: string,
) {
  const finished = await deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, which.node_id);
    const build = await finishBuild(tx, which.node_id, which.build_number, outcome, error);
    if (!node || !build) return undefined; // finished by an earlier attempt that crashed before its job was marked done
    const decision = decide(happened, node);
    if (!changesImage(build)) {
      await daemonStarted(tx, happened, await applyDecision(tx, node, decision));
      return build;
    }
    const settled = outcome === 'SUCCESS' ? 'succeeded' : 'failed';
    await daemonStarted(tx, happened, await applyDecision(tx, node, decision, (n) => [upgradeEvent(n, build, settled, error)]));
    if (await settleRolloutNode(tx, build.image_version, node.id, settled, error)) {
      await enqueueRolloutPass(tx, build.image_version, `build:${node.id}:${build.build_number}`);
    }
    return build;
  });
  if (!finished) return;
  // Counted once committed, so a build is counted once whichever attempt or replica finished it.
  const seconds = Math.max(0, (finished.finished_at ?? finished.started_at).getTime() - finished.started_at.getTime()) / 1000;
  deps.metrics?.buildFinished(finished.action, outcome === 'SUCCESS' ? 'success' : 'failure', seconds);
}

/** A build that (re)started the daemon left it locked: automatic unlock follows, where it is on. */
async function daemonStarted(tx: Queryable, happened: NodeRequest, node: Node) {
  if (happened.type === 'startBuildSucceeded' || happened.type === 'upgradeRolledBack') await enqueueAutoUnlock(tx, node);
}

/** What the user is told about an image change (the rollout learns it through settleRolloutNode). */
function upgradeEvent(node: Node, build: BuildRow, outcome: 'succeeded' | 'failed', error?: string): NodeEventInput {
  const versions = { fromVersion: build.previous_image_version, toVersion: build.image_version };
  return outcome === 'succeeded'
    ? { node, eventType: 'NODE_UPGRADE_COMPLETED', details: versions }
    : { node, eventType: 'NODE_UPGRADE_FAILED', details: { ...versions, reason: error, status: node.status, runningVersion: node.imageVersion } };
}
