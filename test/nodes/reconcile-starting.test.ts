// A node the runtime says is on its way (`starting`: Kubernetes bringing its pod back by itself)
// is left alone by the reconcile loop and counts no restart: a real repair right after it (its
// StatefulSet deleted by hand, `missing`) is made on the next pass, not after a backoff.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { Reconciler } from '../../src/nodes/upkeep/reconcile.ts';
import { InMemoryRuntimeForTests } from '../../src/runtime/in-memory-for-tests.ts';
import type { RuntimeStatus } from '../../src/runtime/types.ts';
import { createLogger } from '../../src/logger.ts';
import { insertOwnerUser, databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

/** The in-memory runtime, with the status of a node told by the test. */
class ToldRuntime extends InMemoryRuntimeForTests {
  readonly told = new Map<string, RuntimeStatus>();
  override async status(nodeId: string): Promise<RuntimeStatus> {
    return this.told.get(nodeId) ?? super.status(nodeId);
  }
}

describe(`a reconcile pass over a node on its way, on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const runtime = new ToldRuntime();

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await insertOwnerUser(db, 'rs', 'rs@example.com', 'scale');
    await insertRelease(db, 'v1');
    await db.query(`INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version) VALUES ('coming', 'rs', 'coming', 'regtest', 'RUNNING', 'running', 'v1')`);
  });
  afterAll(async () => close?.());

  it('leaves it alone without counting a restart, then repairs what goes missing at once', async () => {
    const reconciler = new Reconciler({ db, runtime, intervalMs: 60_000, destroyedRetentionHours: 1, replicaId: 'r1', log: createLogger('silent') });
    // A pod terminating, then created, then pulling its image: several passes see it on its way.
    runtime.told.set('coming', { state: 'starting', imageVersion: 'v1' });
    for (let pass = 0; pass < 4; pass++) await reconciler.reconcileOnce();
    expect(runtime.operations.start).toBe(0);

    // Its StatefulSet deleted by hand: the very next pass recreates it, no backoff to wait out.
    runtime.told.set('coming', { state: 'missing' });
    await reconciler.reconcileOnce();
    expect(runtime.operations.start).toBe(1);

  });
});
