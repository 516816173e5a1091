// Releasing a node's VSS fence (`__rln_instance__`) as the runtimes do (vss/node-urls.ts,
// db/vss.ts deleteVssFence): at a start with no other daemon, whatever wrote it; after the kubelet
// restarted a daemon's container (runtime/kubernetes/runtime.ts), only a fence written before the
// old container ended, so a fence the new daemon already took stays. On the real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { seedNodes } from '../../bench/seed.ts';
import { deleteVssFence } from '../../src/db/vss.ts';
import type { Database } from '../../src/db/database.ts';

describe(`releasing a node's VSS fence, on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  let nodeId: string;

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
    await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'fence@example.com')`);
    await db.query(`INSERT INTO accounts (id, plan) VALUES ('u1', 'scale')`);
    await insertRelease(db, '0.1.0');
    await seedNodes(db, 'u1', 1, 1, 'RUNNING');
    [{ id: nodeId }] = (await db.query<{ id: string }>('SELECT id FROM nodes')) as [{ id: string }];
    await db.query(`INSERT INTO vss_stores (node_id, account_id, credential_hash, pubkey) VALUES ($1, 'u1', 'h', 'k')`, [nodeId]);
  }, 60_000);
  afterAll(() => close?.());

  /** The fence as a daemon takes it, written `secondsAgo` before now (the database's clock); and a value beside it. */
  async function fenceWritten(secondsAgo: number) {
    await db.query(`DELETE FROM vss_objects WHERE node_id = $1`, [nodeId]);
    await db.query(
      `INSERT INTO vss_objects (node_id, store_id, key, version, value, bytes, updated_at) VALUES
         ($1, 's', '__rln_instance__', 1, '\\x6f6c64'::bytea, 3, now() - make_interval(secs => $2)),
         ($1, 's', 'manager', 1, '\\x00'::bytea, 1, now() - make_interval(secs => 600))`,
      [nodeId, secondsAgo],
    );
  }
  const keys = async () => (await db.query<{ key: string }>('SELECT key FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId])).map((r) => r.key);
  const dbNow = async () => new Date((await db.query<{ now: string }>(`SELECT now()::text AS now`))[0]!.now);

  it('releases the fence whenever it was written when no moment is given, and nothing else', async () => {
    await fenceWritten(0);
    await deleteVssFence(db, nodeId);
    expect(await keys()).toEqual(['manager']);
  });

  it('releases a fence written before the old container ended, and keeps one written after', async () => {
    await fenceWritten(30);
    const oldContainerEnded = new Date((await dbNow()).getTime() - 10_000);
    await deleteVssFence(db, nodeId, oldContainerEnded);
    expect(await keys()).toEqual(['manager']);

    // The new daemon took the fence 5 s ago, after the old container ended 10 s ago: kept.
    await fenceWritten(5);
    await deleteVssFence(db, nodeId, oldContainerEnded);
    expect(await keys()).toEqual(['__rln_instance__', 'manager']);
  });
});
