// The durable job that carries out one build. Every step is idempotent: after a crash at any
// point the job runs again from the top and converges on the same result.
import type { Database } from '../db/database.ts';
import { findBuild, finishBuild, type BuildRow } from '../db/builds.ts';
import { findNode, lockNode, updateNode, type NodeRow } from '../db/nodes.ts';
import type { Logger } from '../logger.ts';
import type { NodeRuntime, NodeSpec } from '../runtime/types.ts';
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import { waitForDaemon } from './daemon-health.ts';

export interface BuildJobPayload {
  v: 1;
  nodeId: string;
  buildNumber: number;
}

export const BUILD_JOB = { kind: 'node.build', maxAttempts: 3 } as const;
export const buildJobKey = (p: BuildJobPayload) => `build:${p.nodeId}:${p.buildNumber}`;

export interface BuildJobDeps {
  db: Database;
  runtime: NodeRuntime;
  nodeStartTimeoutMs: number;
  log: Logger;
}

export const specOf = (node: NodeRow, imageVersion = node.image_version): NodeSpec => ({
  nodeId: node.id,
  network: node.network,
  imageVersion,
  restPort: node.rest_port,
  peerPort: node.peer_port,
});

export function buildJob(deps: BuildJobDeps): JobDefinition<BuildJobPayload> {
  return {
    ...BUILD_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(1_000, 30_000),
    parse(payload) {
      const p = payload as Partial<BuildJobPayload>;
      if (p?.v !== 1 || typeof p.nodeId !== 'string' || typeof p.buildNumber !== 'number') {
        throw new Error(`unsupported build job payload ${JSON.stringify(payload)}`);
      }
      return p as BuildJobPayload;
    },
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
      await deps.db.transaction(async (tx) => {
        const node = await lockNode(tx, p.nodeId);
        const build = await finishBuild(tx, p.nodeId, p.buildNumber, 'FAILURE', error.message);
        if (!node || !build) return;
        await updateNode(tx, node.id, { status: 'FAILED' });
      });
    },
  };
}

async function carryOut(deps: BuildJobDeps, node: NodeRow, build: BuildRow, isRetry: boolean) {
  const { runtime, db } = deps;
  const spec = specOf(node, build.image_version);
  switch (build.action) {
    case 'create':
    case 'start': {
      // A retry starts from a clean process: the last attempt's daemon may be up but wedged.
      if (isRetry) await runtime.stop(node.id);
      await runtime.provision(spec);
      await runtime.start(spec);
      await waitUntilAnswering(deps, spec);
      await complete(db, build, { status: 'RUNNING', locked: true });
      return;
    }
    case 'stop': {
      await runtime.stop(node.id);
      await complete(db, build, { status: 'PAUSED' });
      return;
    }
    case 'destroy': {
      await runtime.destroy(node.id);
      await complete(db, build, { status: 'DESTROYED', destroyed: true });
      return;
    }
    case 'upgrade':
      throw new Error('upgrade builds are not supported yet');
  }
}

async function waitUntilAnswering(deps: BuildJobDeps, spec: NodeSpec) {
  try {
    await waitForDaemon(deps.runtime.endpoint(spec), deps.nodeStartTimeoutMs, async () => {
      return (await deps.runtime.status(spec.nodeId)).state !== 'running';
    });
  } catch (err) {
    const tail = (await deps.runtime.tailLog(spec.nodeId, 600)).trim().split('\n').slice(-3).join(' | ');
    throw new Error(`${(err as Error).message}${tail ? `; last log lines: ${tail}` : ''}`);
  }
}

/** Marks the build SUCCESS and applies its outcome to the node, atomically. */
async function complete(db: Database, build: BuildRow, patch: Parameters<typeof updateNode>[2]) {
  await db.transaction(async (tx) => {
    await lockNode(tx, build.node_id);
    const finished = await finishBuild(tx, build.node_id, build.build_number, 'SUCCESS');
    if (finished) await updateNode(tx, build.node_id, patch);
  });
}
