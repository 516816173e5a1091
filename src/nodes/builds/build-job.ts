// The durable job that carries out one build. Every step is idempotent: after a crash at any
// point the job runs again from the top and converges on the same result.
import { releaseFeatures } from '../../domain/release-features.ts';
import type { Database } from '../../db/database.ts';
import { findBuild, setBuildPhase } from '../../db/builds.ts';
import { findNode } from '../../db/nodes.ts';
import type { Build, BuildAction, BuildStep, Node } from '../../domain/nodes.ts';
import type { NodeRequest } from '../lifecycle.ts';
import { changesImage, endBuilds, type BuildEnd } from './build-end.ts';
import type { Logger } from '../../logger.ts';
import type { NodeEndpoint, NodeRuntime, NodeSpec } from '../../runtime/types.ts';
import { exponentialBackoff, type JobDefinition } from '../../jobs/worker.ts';
import { waitForDaemon } from '../health/daemon-health.ts';
import type { RlnClient } from '../../rln/client.ts';
import { BUILD_JOB, type BuildJobPayload } from '../../jobs/catalog.ts';
import { VOLUME_GONE } from '../health/storage-lost.ts';

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
  // The target version decides: an upgrade to a build without VSS starts without the flags.
  continuousState: node.continuousState && releaseFeatures(imageVersion).vss,
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
      const log = deps.log.child({ nodeId: node.id, build: build.buildNumber, action: build.action });
      log.info({ attempt: job.attempts }, 'build running');
      await carryOut(deps, node, build, job.attempts > 1);
      log.info('build succeeded');
    },
    async onGiveUp(p, error) {
      // A node created from a backup: the sealed password is erased with the build's end.
      await deps.restorer?.abandon(p.nodeId, error.message);
      await finish(deps, { nodeId: p.nodeId, buildNumber: p.buildNumber }, 'FAILURE', { type: 'buildFailed' }, error.message);
    },
  };
}

/** Closes one build (build-end.ts closes any number). */
const finish = (deps: BuildJobDeps, which: Pick<Build, 'nodeId' | 'buildNumber'>, outcome: BuildEnd['outcome'], happened: NodeRequest, error?: string) =>
  endBuilds(deps, [{ which, end: { outcome, happened, error } }]);

async function carryOut(deps: BuildJobDeps, node: Node, build: Build, isRetry: boolean) {
  const { runtime } = deps;
  // A start or upgrade would make an empty volume where the node's was and bring it up without its
  // wallet, unannounced: the node is STORAGE_LOST instead, and waits for a recover (storage-lost.ts).
  if ((build.action === 'start' || build.action === 'upgrade' || build.action === 'restart') && !(await runtime.storagePresent(node.id))) {
    return finish(deps, build, 'FAILURE', { type: 'storageLost' }, VOLUME_GONE);
  }
  if (changesImage(build)) {
    const end = await replaceImage(deps, node, build, (phase) => enterPhase(deps, build, phase));
    return finish(deps, build, end.outcome, end.happened, end.error);
  }
  const spec = specOf(node, build.imageVersion);
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
      await finish(deps, build, 'SUCCESS', { type: 'startBuildSucceeded', peer: deps.runtime.peerAddress(spec) });
      return;
    }
    case 'stop': {
      await step('STOPPING_DAEMON');
      await runtime.stop(node.id);
      await finish(deps, build, 'SUCCESS', { type: 'stopBuildSucceeded' });
      return;
    }
    case 'recover':
    case 'restart': {
      // Never two live writers: the old daemon is stopped and waited for (and for a recover, what
      // is left of its volume removed and waited for) before a daemon starts again (storage-lost.ts).
      // A restart keeps the volume and version: the runtime asks for the node's root key at every
      // start (secrets/node-root-keys.ts), so the daemon comes back with --root-public-key, locked.
      await step('STOPPING_DAEMON');
      await runtime.stop(node.id);
      if (build.action === 'recover') {
        await step('REPLACING_VOLUME');
        await runtime.replaceStorage(spec);
      }
      await step('STARTING_DAEMON');
      await runtime.start(spec);
      await step('WAITING_FOR_DAEMON');
      await waitUntilAnswering(deps, spec);
      // RUNNING and locked; a recovered node also not initialised (the recover rule said so): its
      // owner initialises it with their mnemonic.
      await finish(deps, build, 'SUCCESS', { type: 'startBuildSucceeded', peer: deps.runtime.peerAddress(spec) });
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
async function enterPhase(deps: BuildJobDeps, build: Build, phase: BuildStep) {
  await setBuildPhase(deps.db, build.nodeId, build.buildNumber, phase);
}

/**
 * Moves a node to the build's image version, keeping its storage, and says how the build ended
 * (its caller closes it). If the new version does not come up healthy the previous one is brought
 * back: the build is a FAILURE with the reason and the node RUNNING (locked) on its old version;
 * only if that fails too is the node FAILED. `enter` records each step (Build.currentPhase).
 */
export async function replaceImage(deps: BuildJobDeps, node: Node, build: Build, enter: (phase: BuildStep) => Promise<void>): Promise<BuildEnd> {
  const target = specOf(node, build.imageVersion);
  try {
    await enter('PROVISIONING');
    await deps.runtime.provision(target);
    await enter('REPLACING_IMAGE');
    await deps.runtime.replaceImage(target);
    await enter('WAITING_FOR_DAEMON');
    await waitUntilAnswering(deps, target);
  } catch (err) {
    const previous = build.previousImageVersion ?? node.imageVersion;
    const reason = `version ${build.imageVersion} did not come up healthy: ${(err as Error).message}`;
    deps.log.warn({ nodeId: node.id, build: build.buildNumber, reason }, 'rolling back to the previous version');
    try {
      await enter('ROLLING_BACK');
      const back = specOf(node, previous);
      await deps.runtime.replaceImage(back);
      await waitUntilAnswering(deps, back);
    } catch (rollbackErr) {
      return { outcome: 'FAILURE', happened: { type: 'buildFailed' }, error: `${reason}; rolling back to ${previous} failed too: ${(rollbackErr as Error).message}` };
    }
    return { outcome: 'FAILURE', happened: { type: 'upgradeRolledBack', imageVersion: previous }, error: `${reason}; rolled back to ${previous}` };
  }
  return { outcome: 'SUCCESS', happened: { type: 'startBuildSucceeded', imageVersion: build.imageVersion, peer: deps.runtime.peerAddress(target) } };
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
