// A reconcile pass over running nodes whose state the runtime answers from memory does no I/O
// between nodes; it must still let the event loop through (nodes/upkeep/reconcile.ts reads it a page at a time), or
// every request arriving during a pass over a large fleet waits for the whole pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { Reconciler } from '../../src/nodes/upkeep/reconcile.ts';
import { InMemoryRuntimeForTests } from '../../src/runtime/in-memory-for-tests.ts';
import { createLogger } from '../../src/logger.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`a reconcile pass over a large fleet on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const runtime = new InMemoryRuntimeForTests();
  const NODES = 2_000;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'fu', 'fu@example.com', 'scale');
    await insertRelease(db, 'v1');
    await db.query(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version)
       SELECT md5('n' || g), 'fu', 'n' || g, 'regtest', 'RUNNING', 'running', 'v1' FROM generate_series(1, $1::int) g`,
      [NODES],
    );
    // Every one of them up already: the pass asks about each and has nothing to repair.
    for (const { id } of await db.query<{ id: string }>('SELECT id FROM nodes')) {
      await runtime.start({ nodeId: id, network: 'regtest', imageVersion: 'v1', restPort: null, peerPort: null });
    }
  });
  afterAll(async () => close?.());

  it('lets the event loop run between its nodes', async () => {
    let asked = 0;
    const status = runtime.status.bind(runtime);
    runtime.status = (nodeId) => (asked++, status(nodeId));
    const passes: number[] = [];
    const reconciler = new Reconciler({ db, runtime, intervalMs: 60_000, destroyedRetentionHours: 1, replicaId: 'r1', metrics: { reconcilePassed: (_s, n) => void passes.push(n) }, log: createLogger('silent') });
    // What the event loop saw of the pass, each time it got a turn: how many nodes were asked so far.
    const seen: number[] = [];
    let watching = true;
    const watch = () => {
      seen.push(asked);
      if (watching) setImmediate(watch);
    };
    setImmediate(watch);
    await reconciler.reconcileOnce();
    watching = false;
    expect(passes).toEqual([NODES]);
    expect(seen.filter((n) => n > 0 && n < NODES).length).toBeGreaterThanOrEqual(NODES / 250 - 1);
  });
});
