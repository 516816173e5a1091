// A rollout's upgrades are carried out in batches (nodes/rollout/upgrades-job.ts): one job for the
// pass's builds, each step recorded for the batch in one statement, one transaction to end them.
// What each node gets must not change with it: its own build, its own rollback when its new
// version fails, its own events; and a batch run again after a crash carries out only what is left.
// Runs the job's handler on a real database with the in-memory runtime, one node's image broken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { insertNode } from '../../../src/db/nodes.ts';
import { insertRelease } from '../../../src/db/releases.ts';
import { ReleaseService } from '../../../src/releases/service.ts';
import { rolloutUpgradesJob } from '../../../src/nodes/rollout/upgrades-job.ts';
import { ROLLOUT_UPGRADES_JOB } from '../../../src/jobs/catalog.ts';
import { InMemoryRuntimeForTests } from '../../../src/runtime/in-memory-for-tests.ts';
import type { NodeSpec } from '../../../src/runtime/types.ts';
import { createLogger } from '../../../src/logger.ts';
import { newId } from '../../../src/auth/tokens.ts';
import { RlnClient } from '../../../src/rln/client.ts';
import type { JobRow } from '../../../src/db/jobs.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../../helpers/database.ts';

/** The in-memory runtime, but one node's new image fails to be put in place. */
class OneBrokenUpgrade extends InMemoryRuntimeForTests {
  broken: string | undefined;
  override async replaceImage(spec: NodeSpec) {
    if (spec.nodeId === this.broken && spec.imageVersion === 'v2') throw new Error('image pull failed');
    return super.replaceImage(spec);
  }
}

describe(`rollout upgrades in batches on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const runtime = new OneBrokenUpgrade();
  const rln = new RlnClient({ timeoutMs: 5_000, maxRequestBytes: 64 * 1024, maxResponseBytes: 1024 * 1024 });
  const nodes: string[] = [];
  /** Statements that recorded a build's phase, counted across the handler's run. */
  let phaseStatements = 0;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    const query = db.query.bind(db);
    db.query = (async (sql: string, params?: unknown[]) => {
      if (/UPDATE builds .*SET phase/s.test(sql)) phaseStatements++;
      return query(sql, params);
    }) as Database['query'];
    await runtime.listen();
    await insertOwnerUser(db, 'ru', 'ru@example.com', 'scale');
    await insertRelease(db, 'v1');
    for (let i = 0; i < 4; i++) {
      const id = newId();
      nodes.push(id);
      await insertNode(db, { id, userId: 'ru', name: `n${i}`, network: 'regtest', status: 'RUNNING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: null, peerPort: null });
      await runtime.start({ nodeId: id, network: 'regtest', imageVersion: 'v1', restPort: null, peerPort: null });
    }
    runtime.broken = nodes[2];
  });
  afterAll(async () => {
    await rln.close();
    await runtime.shutdown();
    await close?.();
  });

  const job = () => rolloutUpgradesJob({ db, runtime, nodeStartTimeoutMs: 5_000, rln, log: createLogger('silent') });
  const batchJobs = () => db.query<{ id: number; payload: any }>(`SELECT id, payload FROM jobs WHERE kind = $1 ORDER BY id`, [ROLLOUT_UPGRADES_JOB.kind]);
  const buildsOf = (version: string) =>
    db.query<{ node_id: string; status: string; error: string | null }>(`SELECT node_id, status, error FROM builds WHERE image_version = $1 AND action = 'upgrade' ORDER BY node_id`, [version]);

  it("carries out a pass's upgrades as one job: each node its own build, rollback and events", async () => {
    const releases = new ReleaseService(db, { concurrency: 10, failureBudget: 3 });
    const published = await releases.publish('v2');
    expect(published.rollout).toMatchObject({ nodes: 4, started: 4 });
    const jobs = await batchJobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.payload.builds).toHaveLength(4);
    expect(await db.query(`SELECT 1 FROM jobs WHERE kind = 'node.build'`)).toHaveLength(0);

    phaseStatements = 0;
    await job().handle(ROLLOUT_UPGRADES_JOB.parse(jobs[0]!.payload), { attempts: 1 } as JobRow);
    // Three steps for the batch and one for the broken node's rollback, not three a node.
    expect(phaseStatements).toBeLessThanOrEqual(4);

    const builds = await buildsOf('v2');
    expect(builds.filter((b) => b.status === 'SUCCESS').map((b) => b.node_id).sort()).toEqual(nodes.filter((n) => n !== nodes[2]).sort());
    expect(builds.find((b) => b.node_id === nodes[2])).toMatchObject({ status: 'FAILURE', error: expect.stringMatching(/image pull failed.*rolled back to v1/) });
    const rows = await db.query<{ id: string; status: string; image_version: string; locked: boolean }>(`SELECT id, status, image_version, locked FROM nodes WHERE id = ANY($1)`, [nodes]);
    for (const row of rows) expect(row).toMatchObject({ status: 'RUNNING', locked: true, image_version: row.id === nodes[2] ? 'v1' : 'v2' });
    const events = await db.query<{ node_id: string; event_type: string }>(
      `SELECT node_id, event_type FROM node_events WHERE event_type IN ('NODE_UPGRADE_COMPLETED', 'NODE_UPGRADE_FAILED') ORDER BY node_id`,
    );
    expect(events.map((e) => `${e.node_id}:${e.event_type}`).sort()).toEqual(
      nodes.map((n) => `${n}:${n === nodes[2] ? 'NODE_UPGRADE_FAILED' : 'NODE_UPGRADE_COMPLETED'}`).sort(),
    );
    // The rollout learned every outcome and was asked for its next pass, which completes it.
    expect((await releases.status('v2')).nodes).toMatchObject({ succeeded: 3, failed: 1, upgrading: 0 });
    expect(await db.query(`SELECT 1 FROM jobs WHERE kind = 'release.rollout-pass' AND state = 'queued'`)).not.toHaveLength(0);
    await releases.advanceAll();
    expect((await releases.status('v2')).state).toBe('completed');

    // Run again, as after a crash before its job was marked done: nothing is carried out twice.
    const before = { ...runtime.operations };
    await job().handle(ROLLOUT_UPGRADES_JOB.parse(jobs[0]!.payload), { attempts: 2 } as JobRow);
    expect(runtime.operations).toEqual(before);
    expect(await db.query(`SELECT 1 FROM node_events WHERE event_type = 'NODE_UPGRADE_COMPLETED'`)).toHaveLength(3);
  });

  it('starts no more upgrades of a bad release than its failure budget lets fail, whatever the concurrency', async () => {
    runtime.broken = undefined;
    const releases = new ReleaseService(db, { concurrency: 10, failureBudget: 1 });
    expect((await releases.publish('fail-v3')).rollout).toMatchObject({ nodes: 4, started: 2 });
    const [, bad] = await batchJobs();
    await job().handle(ROLLOUT_UPGRADES_JOB.parse(bad!.payload), { attempts: 1 } as JobRow);
    await releases.advanceAll();
    const status = await releases.status('fail-v3');
    expect(status).toMatchObject({ state: 'paused', nodes: { failed: 2, pending: 2, upgrading: 0 } });
  });

  it('carries out only the builds still open when a batch runs again, and fails what is left when it gives up', async () => {
    const releases = new ReleaseService(db, { concurrency: 10, failureBudget: 3 });
    await releases.publish('v3');
    const [, , second] = await batchJobs();
    const payload = ROLLOUT_UPGRADES_JOB.parse(second!.payload);
    expect(payload.builds).toHaveLength(4);
    // An earlier attempt ended the first build before it crashed.
    const first = payload.builds[0]!;
    await db.query(`UPDATE builds SET status = 'SUCCESS', finished_at = now() WHERE node_id = $1 AND build_number = $2`, [first.nodeId, first.buildNumber]);
    const before = runtime.operations.replaceImage;
    await job().handle(payload, { attempts: 2 } as JobRow);
    expect(runtime.operations.replaceImage - before).toBe(3);

    await releases.publish('v4');
    const [, , , third] = await batchJobs();
    const giveUp = ROLLOUT_UPGRADES_JOB.parse(third!.payload);
    await job().onGiveUp!(giveUp, new Error('lease lost three times'));
    const builds = await buildsOf('v4');
    expect(builds).toHaveLength(4);
    for (const b of builds) expect(b).toMatchObject({ status: 'FAILURE', error: 'lease lost three times' });
    expect((await releases.status('v4')).nodes).toMatchObject({ failed: 4, upgrading: 0 });
  });
});
