// The rollout pass job against a real database: a pass marks done the passes of its version still
// queued (a burst of settled upgrades costs one pass, not one each) and leaves other versions'
// alone; a pass that leaves the rollout waiting on nodes busy with builds of their own asks for
// another one later, since no settled upgrade will.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { claimJob } from '../../../src/db/jobs.ts';
import { insertNode } from '../../../src/db/nodes.ts';
import { insertRelease } from '../../../src/db/releases.ts';
import { countRolloutNodes, enrolRolloutNodes, insertRollout, settleRolloutNode } from '../../../src/db/rollouts.ts';
import { insertUser } from '../../../src/db/users.ts';
import { createLogger } from '../../../src/logger.ts';
import { enqueueBuild } from '../../../src/nodes/builds/enqueue-build.ts';
import { enqueueRolloutPass } from '../../../src/nodes/rollout/enqueue-pass.ts';
import { ROLLOUT_PASS_JOB } from '../../../src/jobs/catalog.ts';
import { rolloutPassJob } from '../../../src/nodes/rollout/pass-job.ts';
import { WAITING_RECHECK_MS } from '../../../src/nodes/rollout/rollout.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../../helpers/database.ts';
import type { Node } from '../../../src/domain/nodes.ts';

describe(`the rollout pass job on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const nodes: Node[] = [];
  const job = () => rolloutPassJob({ db, log: createLogger('silent') });
  const passJobs = (version: string) =>
    db.query<{ id: number; state: string; run_at: Date; payload: { askedBy: string } }>(
      `SELECT id, state, run_at, payload FROM jobs WHERE kind = $1 AND payload->>'version' = $2 ORDER BY id`,
      [ROLLOUT_PASS_JOB.kind, version],
    );
  /** Claims and runs the pass job of `version` asked for by `askedBy`, as a worker would. */
  const runPass = async (version: string, askedBy: string) => {
    const id = (await passJobs(version)).find((j) => j.payload.askedBy === askedBy)!.id;
    await db.query(`UPDATE jobs SET run_at = now() - interval '1 hour' WHERE id = $1`, [id]);
    const claimed = await claimJob(db, [ROLLOUT_PASS_JOB.kind], 30_000);
    expect(claimed?.id).toBe(id);
    await job().handle(ROLLOUT_PASS_JOB.parse(claimed!.payload), claimed!);
  };

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertRelease(db, 'v1');
    await insertOwnerUser(db, 'u1', 'passes@example.com', 'scale');
    for (const id of ['a', 'b']) {
      nodes.push(
        await insertNode(db, {
          id: id.repeat(32), userId: 'u1', name: id, network: 'regtest', status: 'RUNNING', desiredState: 'running',
          imageVersion: 'v1', settings: {}, restPort: null, peerPort: null,
        }),
      );
    }
    await insertRelease(db, 'v2');
    await insertRollout(db, 'v2', 1, 0);
    expect(await enrolRolloutNodes(db, 'v2')).toBe(2);
  });
  afterAll(() => close());

  it('absorbs the queued passes of its version, and only those', async () => {
    await db.transaction(async (tx) => {
      for (const askedBy of ['build:1', 'build:2', 'build:3']) await enqueueRolloutPass(tx, 'v2', askedBy);
      await enqueueRolloutPass(tx, 'v9', 'build:1');
    });
    await runPass('v2', 'build:1');
    expect((await passJobs('v2')).map((j) => j.state)).toEqual(['running', 'done', 'done']);
    expect((await passJobs('v9')).map((j) => j.state)).toEqual(['queued']);
    // The one pass did the work: one upgrade started, the concurrency of 1 holds.
    expect(await countRolloutNodes(db, 'v2')).toMatchObject({ upgrading: 1, pending: 1 });
    await db.query(`UPDATE jobs SET state = 'done' WHERE kind = $1`, [ROLLOUT_PASS_JOB.kind]);
  });

  it('asks for a later pass when every pending node is busy with a build of its own and none is upgrading', async () => {
    const [upgraded, busy] = (await db.query<{ node_id: string; state: string }>(`SELECT node_id, state FROM rollout_nodes WHERE version = 'v2' ORDER BY state DESC`)).map((r) => r.node_id);
    await settleRolloutNode(db, 'v2', upgraded!, 'succeeded');
    await db.transaction((tx) => enqueueBuild(tx, nodes.find((n) => n.id === busy)!, 'stop', 'v1'));
    await db.transaction((tx) => enqueueRolloutPass(tx, 'v2', 'build:4'));
    const before = Date.now();
    await runPass('v2', 'build:4');
    expect(await countRolloutNodes(db, 'v2')).toMatchObject({ upgrading: 0, pending: 1, succeeded: 1 });
    const later = (await passJobs('v2')).filter((j) => j.state === 'queued');
    expect(later).toHaveLength(1);
    expect(later[0]!.payload.askedBy).toMatch(/^after:\d+$/);
    expect(later[0]!.run_at.getTime()).toBeGreaterThanOrEqual(before + WAITING_RECHECK_MS - 1_000);
  });
});
