// A build's currentPhase follows what the build job is doing: each runtime call happens while the
// build shows the step it belongs to, and a finished build shows its outcome. Runs the build job's
// handler on a real database with the in-memory runtime, watching the stored phase from inside
// each runtime call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { findBuild, insertBuild } from '../../src/db/builds.ts';
import { insertNode } from '../../src/db/nodes.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { buildJob } from '../../src/nodes/builds/build-job.ts';
import { buildPhaseOf, type BuildAction } from '../../src/domain/nodes.ts';
import { InMemoryRuntimeForTests } from '../../src/runtime/in-memory-for-tests.ts';
import { createLogger } from '../../src/logger.ts';
import { newId } from '../../src/auth/tokens.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import type { JobRow } from '../../src/db/jobs.ts';
import { RlnClient } from '../../src/rln/client.ts';

describe(`build phases on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  let runtime: InMemoryRuntimeForTests;
  /** The phase stored for the build under way, as seen from inside each runtime call. */
  const seen: string[] = [];
  let current: { nodeId: string; buildNumber: number } | undefined;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'pu', 'pu@example.com', 'starter');
    for (const version of ['v1', 'v2', 'fail-v2']) await insertRelease(db, version);
    runtime = await new InMemoryRuntimeForTests().listen();
    const watch = async (call: string) => {
      const b = await findBuild(db, current!.nodeId, current!.buildNumber);
      const entry = `${call}:${buildPhaseOf(b!.status, b!.phase)}`;
      if (seen.at(-1) !== entry) seen.push(entry); // the daemon's status is asked repeatedly while waiting

    };
    for (const method of ['provision', 'start', 'stop', 'replaceImage', 'destroy', 'status'] as const) {
      const original = runtime[method].bind(runtime) as (...args: unknown[]) => Promise<unknown>;
      (runtime as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        await watch(method);
        return original(...args);
      };
    }
  });
  // Builds ask the in-memory runtime's health endpoint whether the daemon answers.
  const rln = new RlnClient({ timeoutMs: 5_000, maxRequestBytes: 64 * 1024, maxResponseBytes: 1024 * 1024 });
  afterAll(async () => {
    await rln.close();
    await runtime?.shutdown();
    await close?.();
  });

  const job = () =>
    buildJob({ db, runtime, nodeStartTimeoutMs: 5_000, rln, log: createLogger('silent') });

  async function run(nodeId: string, action: BuildAction, imageVersion: string, previous?: string) {
    const build = await insertBuild(db, { nodeId, action, imageVersion, previousImageVersion: previous });
    current = { nodeId, buildNumber: build.buildNumber };
    expect(buildPhaseOf(build.status, build.phase)).toBe('QUEUED');
    seen.length = 0;
    await job().handle({ v: 1, nodeId, buildNumber: build.buildNumber }, { attempts: 1 } as JobRow);
    const done = await findBuild(db, nodeId, build.buildNumber);
    return { calls: [...seen], phase: buildPhaseOf(done!.status, done!.phase) };
  }

  it('shows QUEUED, then each step of a create, stop, start, upgrade and destroy, then DONE', async () => {
    const nodeId = newId();
    await insertNode(db, { id: nodeId, userId: 'pu', name: 'p', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: 31001, peerPort: 31002 });
    expect(await run(nodeId, 'create', 'v1')).toEqual({ calls: ['provision:PROVISIONING', 'start:STARTING_DAEMON'], phase: 'DONE' });
    expect(await run(nodeId, 'stop', 'v1')).toEqual({ calls: ['stop:STOPPING_DAEMON'], phase: 'DONE' });
    expect(await run(nodeId, 'start', 'v1', 'v1')).toEqual({ calls: ['provision:PROVISIONING', 'start:STARTING_DAEMON'], phase: 'DONE' });
    expect(await run(nodeId, 'upgrade', 'v2', 'v1')).toEqual({ calls: ['provision:PROVISIONING', 'replaceImage:REPLACING_IMAGE'], phase: 'DONE' });
    expect(await run(nodeId, 'destroy', 'v2')).toEqual({ calls: ['destroy:DESTROYING'], phase: 'DONE' });
  });

  it('shows ROLLING_BACK while a failed upgrade brings the previous version back, and FAILED at the end', async () => {
    const nodeId = newId();
    await insertNode(db, { id: nodeId, userId: 'pu', name: 'q', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: 31003, peerPort: 31004 });
    await run(nodeId, 'create', 'v1');
    await db.query(`UPDATE nodes SET status = 'RUNNING' WHERE id = $1`, [nodeId]);
    expect(await run(nodeId, 'upgrade', 'fail-v2', 'v1')).toEqual({
      calls: ['provision:PROVISIONING', 'replaceImage:REPLACING_IMAGE', 'status:WAITING_FOR_DAEMON', 'replaceImage:ROLLING_BACK'],
      phase: 'FAILED',
    });
  });
});
