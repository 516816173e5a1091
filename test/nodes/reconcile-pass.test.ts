// What a reconcile pass looks at: the nodes whose daemon should run and the daemons the runtime
// runs, never the paused rest of the fleet. It starts a daemon that should run and is missing,
// stops one that runs and should not (a paused node's, a superseded node's), and leaves a node with
// a build in progress to its build.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { Reconciler } from '../../src/nodes/upkeep/reconcile.ts';
import { InMemoryRuntimeForTests } from '../../src/runtime/in-memory-for-tests.ts';
import { createLogger } from '../../src/logger.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`a reconcile pass on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const runtime = new InMemoryRuntimeForTests();
  const PAUSED = 600; // more than two of the pass's pages
  const spec = (nodeId: string) => ({ nodeId, network: 'regtest' as const, imageVersion: 'v1', restPort: null, peerPort: null });
  const node = async (id: string, status: string, desired: string, extra = '') =>
    db.query(`INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version${extra ? ', superseded_by' : ''})
              VALUES ($1, 'ru', $1, 'regtest', $2, $3, 'v1'${extra ? ', $4' : ''})`, extra ? [id, status, desired, extra] : [id, status, desired]);

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'ru', 'ru@example.com', 'scale');
    await insertRelease(db, 'v1');
    await db.query(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version)
       SELECT 'paused-' || g, 'ru', 'p' || g, 'regtest', 'PAUSED', 'stopped', 'v1' FROM generate_series(1, $1::int) g`,
      [PAUSED],
    );
    await node('up', 'RUNNING', 'running');
    await node('died', 'RUNNING', 'running');
    await node('stray', 'PAUSED', 'stopped');
    await node('restored-from', 'RUNNING', 'running', 'up');
    await node('building', 'RUNNING', 'running');
    await db.query(`INSERT INTO builds (node_id, build_number, action, status, image_version) VALUES ('building', 1, 'start', 'IN_PROGRESS', 'v1')`);
    for (const id of ['up', 'stray', 'restored-from']) await runtime.start(spec(id));
    runtime.operations.start = 0;
  });
  afterAll(async () => close?.());

  it('looks only at the nodes that should run and the daemons that run, and repairs both', async () => {
    const passes: number[] = [];
    const reconciler = new Reconciler({ db, runtime, intervalMs: 60_000, destroyedRetentionHours: 1, replicaId: 'r1', metrics: { reconcilePassed: (_s, n) => void passes.push(n) }, log: createLogger('silent') });
    await reconciler.reconcileOnce();

    // up and died (should run), stray and restored-from (run, should not); not the paused 600.
    expect(passes).toEqual([4]);
    expect(runtime.runningDaemons().sort()).toEqual(['died', 'up']);
    expect(runtime.operations).toMatchObject({ start: 1, stop: 2 });
    // The daemon started again comes back locked, as every start does.
    expect((await db.query<{ locked: boolean }>(`SELECT locked FROM nodes WHERE id = 'died'`))[0]!.locked).toBe(true);
    // The build in progress keeps its node; the pass started nothing for it.
    expect(runtime.runsDaemon('building')).toBe(false);

    // A second pass finds nothing to repair.
    await reconciler.reconcileOnce();
    expect(passes).toEqual([4, 2]);
    expect(runtime.operations).toMatchObject({ start: 1, stop: 2 });
  });
});
