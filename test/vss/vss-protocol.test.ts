// LDK's VSS protocol over real HTTP (docs/VSS.md): every versioning rule of the reference server,
// each ErrorResponse code with its status, paging, and the body refusals, from a client that
// encodes the .proto's messages and signs like vss-client (test/helpers/vss-client.ts).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { createLogger } from '../../src/logger.ts';
import { VssJanitor } from '../../src/vss/vss-janitor.ts';

const CONFLICT = 1, INVALID = 2, NO_SUCH_KEY = 4;
const v = (s: string) => Buffer.from(s);

describe(`VSS protocol, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let url: string;
  let c: ReturnType<typeof vssClient>;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
    const [nodeId] = await createNodes(t, alice, [{ name: 'vss' }], { untilRunning: false });
    url = await t.server.services.vss.issueUrl(alice.id, nodeId);
    c = vssClient(url, newVssKey());
  }, 60_000);
  afterAll(() => t?.stop());

  it('version 0 creates only; n updates only from n; the answer carries the value and version', async () => {
    expect((await c.put('s', [{ key: 'a', version: 0, value: v('one') }])).status).toBe(200);
    const got = await c.get('s', 'a');
    expect(got.status).toBe(200);
    expect(got.body.value).toMatchObject({ key: 'a', version: 1 });
    expect(got.body.value.value.toString()).toBe('one');
    const again = await c.put('s', [{ key: 'a', version: 0, value: v('two') }]);
    expect(again.status).toBe(409);
    expect(again.body.errorCode).toBe(CONFLICT);
    expect((await c.put('s', [{ key: 'a', version: 2, value: v('x') }])).status).toBe(409);
    expect((await c.put('s', [{ key: 'a', version: 1, value: v('two') }])).status).toBe(200);
    expect((await c.get('s', 'a')).body.value).toMatchObject({ version: 2 });
    expect((await c.put('s', [{ key: 'missing', version: 3, value: v('x') }])).status).toBe(409);
  });

  it('version -1 writes unconditionally, and the stored version becomes 1', async () => {
    expect((await c.put('s', [{ key: 'u', version: -1, value: v('1') }])).status).toBe(200);
    await c.put('s', [{ key: 'u', version: 1, value: v('2') }]);
    expect((await c.put('s', [{ key: 'u', version: -1, value: v('3') }])).status).toBe(200);
    const got = await c.get('s', 'u');
    expect(got.body.value.version).toBe(1);
    expect(got.body.value.value.toString()).toBe('3');
  });

  it('a put whose any item conflicts changes nothing, deletes and global_version included', async () => {
    await c.put('t', [{ key: 'k1', version: 0, value: v('a') }, { key: 'k2', version: 0, value: v('b') }]);
    const bad = await c.put('t', [{ key: 'k1', version: 1, value: v('changed') }, { key: 'k2', version: 0, value: v('dup') }]);
    expect(bad.status).toBe(409);
    expect((await c.get('t', 'k1')).body.value.value.toString()).toBe('a');
    // Deleting a missing key inside a put is a conflict, and undoes the put's writes.
    const del = await c.put('t', [{ key: 'k1', version: 1, value: v('changed') }], { deletes: [{ key: 'nope', version: -1 }] });
    expect(del.status).toBe(409);
    expect((await c.get('t', 'k1')).body.value).toMatchObject({ version: 1 });
    // A delete at the wrong version conflicts; at the right one it goes.
    expect((await c.put('t', [], { deletes: [{ key: 'k2', version: 5 }] })).status).toBe(409);
    expect((await c.put('t', [{ key: 'k3', version: 0, value: v('c') }], { deletes: [{ key: 'k2', version: 1 }] })).status).toBe(200);
    expect((await c.get('t', 'k2')).status).toBe(404);
  });

  it('global_version: checked like a version (0 before the first), listed on the first page only', async () => {
    expect((await c.list('g')).body.globalVersion).toBe(0);
    expect((await c.put('g', [{ key: 'x', version: -1, value: v('1') }], { globalVersion: 0 })).status).toBe(200);
    const stale = await c.put('g', [{ key: 'y', version: -1, value: v('1') }], { globalVersion: 0 });
    expect(stale.status).toBe(409);
    expect((await c.get('g', 'y')).status).toBe(404);
    expect((await c.put('g', [{ key: 'y', version: -1, value: v('1') }], { globalVersion: 1 })).status).toBe(200);
    const listed = await c.list('g');
    expect(listed.body.globalVersion).toBe(2);
    // The global version is never a listed key.
    expect(listed.body.keyVersions.map((k: any) => k.key)).toEqual(['x', 'y']);
    // A store_id with none yet is at 0: n > 0 conflicts there and writes nothing; -1 sets it to 1 anywhere.
    expect((await c.put('g2', [{ key: 'z', version: -1, value: v('1') }], { globalVersion: 1 })).status).toBe(409);
    expect((await c.get('g2', 'z')).status).toBe(404);
    expect((await c.list('g2')).body.globalVersion).toBe(0);
    expect((await c.put('g', [{ key: 'z', version: -1, value: v('1') }], { globalVersion: -1 })).status).toBe(200);
    expect((await c.list('g')).body.globalVersion).toBe(1);
    expect((await c.put('g2', [], { globalVersion: -1 })).status).toBe(200);
    expect((await c.list('g2')).body.globalVersion).toBe(1);
  });

  it('deleteObject of a missing key is fine; getObject of it is NO_SUCH_KEY 404', async () => {
    expect((await c.delete('d', { key: 'never', version: -1 })).status).toBe(200);
    await c.put('d', [{ key: 'k', version: 0, value: v('x') }]);
    expect((await c.delete('d', { key: 'k', version: 1 })).status).toBe(200);
    const gone = await c.get('d', 'k');
    expect(gone.status).toBe(404);
    expect(gone.body.errorCode).toBe(NO_SUCH_KEY);
  });

  it('lists in pages of at most the page size (100 at most), by prefix, with a next page token', async () => {
    const items = Array.from({ length: 130 }, (_, i) => ({ key: `p/${String(i).padStart(3, '0')}`, version: 0, value: v('x') }));
    expect((await c.put('l', [...items, { key: 'q/other', version: 0, value: v('x') }])).status).toBe(200);
    const first = await c.list('l', { keyPrefix: 'p/' });
    expect(first.body.keyVersions).toHaveLength(100);
    expect(first.body.nextPageToken).toBeTruthy();
    const second = await c.list('l', { keyPrefix: 'p/', pageToken: first.body.nextPageToken });
    expect(second.body.keyVersions).toHaveLength(30);
    expect(second.body.globalVersion).toBeUndefined();
    const keys = [...first.body.keyVersions, ...second.body.keyVersions].map((k: any) => k.key);
    expect(keys).toEqual(items.map((i) => i.key));
    const small = await c.list('l', { pageSize: 7 });
    expect(small.body.keyVersions).toHaveLength(7);
    expect(small.body.keyVersions[0]).toMatchObject({ key: 'p/000', version: 1 });
  });

  it('keeps a value past 256 KiB in the blob store, reads it back whole, and removes it when replaced', async () => {
    const big = Buffer.alloc(300 * 1024, 7);
    big.write('start');
    expect((await c.put('b', [{ key: 'big', version: 0, value: big }])).status).toBe(200);
    const got = await c.get('b', 'big');
    expect(Buffer.compare(got.body.value.value, big)).toBe(0);
    const [row] = await t.server.db.query<{ blob_key: string | null; bytes: string }>(`SELECT blob_key, bytes::text FROM vss_objects WHERE store_id = 'b'`);
    expect(row!.blob_key).toBeTruthy();
    expect(row!.bytes).toBe(String(big.length));
    const blobFile = join(t.config.dataDir, 'vss', 'blobs', row!.blob_key!);
    expect(existsSync(blobFile)).toBe(true);
    // A conflicting put stores nothing new; a small value replaces the blob, which goes.
    expect((await c.put('b', [{ key: 'big', version: 0, value: big }])).status).toBe(409);
    expect(readdirSync(join(t.config.dataDir, 'vss', 'blobs', row!.blob_key!.split('/')[0]!))).toHaveLength(1);
    expect((await c.put('b', [{ key: 'big', version: 1, value: v('small') }])).status).toBe(200);
    expect(existsSync(blobFile)).toBe(false);
    expect((await c.get('b', 'big')).body.value.value.toString()).toBe('small');
  });

  it('store ids are separate stores', async () => {
    await c.put('one', [{ key: 'same', version: 0, value: v('1') }]);
    expect((await c.put('two', [{ key: 'same', version: 0, value: v('2') }])).status).toBe(200);
    expect((await c.get('one', 'same')).body.value.value.toString()).toBe('1');
  });

  it('refuses invalid requests with INVALID_REQUEST 400, and undecodable bodies with a plain 400', async () => {
    for (const answer of [
      await c.put('', [{ key: 'a', version: 0 }]),
      await c.put('s', [{ key: '', version: 0 }]),
      await c.put('s', [{ key: 'a', version: -2 }]),
      await c.put('s', [{ key: 'a', version: 0 }, { key: 'a', version: 0 }]),
      await c.put('s', Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, version: -1 }))),
      await c.get('s', ''),
      await c.list('s', { pageSize: -1 }),
      // Past the reference's column sizes (store id 120, key 600 characters), and past three
      // bytes a character, which would not fit the database's index.
      await c.put('s'.repeat(121), [{ key: 'a', version: -1 }]),
      await c.put('s', [{ key: 'k'.repeat(601), version: -1 }]),
      await c.put('s', [{ key: '€'.repeat(401), version: -1 }]),
      await c.get('s', 'k'.repeat(601)),
      await c.delete('s', { key: 'k'.repeat(601), version: -1 }),
    ]) {
      expect(answer.status).toBe(400);
      expect(answer.body.errorCode).toBe(INVALID);
    }
    // At the limits, a write is taken.
    expect((await c.put('s'.repeat(120), [{ key: 'k'.repeat(600), version: -1, value: v('at the limit') }])).status).toBe(200);
    expect((await c.get('s'.repeat(120), 'k'.repeat(600))).body.value.value.toString()).toBe('at the limit');
    const garbage = await fetch(`${url}/putObjects`, { method: 'POST', headers: { authorization: newVssKey().token() }, body: Buffer.from([0xff, 0xff, 0xff]) });
    expect(garbage.status).toBe(400);
  });

  it("removes a destroyed node's store, large values included, once DESTROYED_RETENTION_HOURS is near, and no sooner", async () => {
    const [gone, recent] = await createNodes(t, alice, [{ name: 'gone' }, { name: 'recent' }], { untilRunning: false });
    for (const node of [gone!, recent!]) {
      const client = vssClient(await t.server.services.vss.issueUrl(alice.id, node), newVssKey());
      expect((await client.put('s', [{ key: 'big', version: 0, value: Buffer.alloc(300 * 1024) }, { key: 'small', version: 0, value: v('x') }])).status).toBe(200);
    }
    const retention = t.config.destroyedRetentionHours;
    // Within the last hour of the retention: the sweep's, before the reconcile loop purges the node's record.
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYED', destroyed_at = now() - make_interval(hours => $2) + interval '30 minutes' WHERE id = $1`, [gone, retention]);
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYED', destroyed_at = now() - interval '1 hour' WHERE id = $1`, [recent]);
    const janitor = new VssJanitor({ db: t.server.db, blobs: t.server.services.vssBlobs, destroyedRetentionHours: retention, log: createLogger('silent') });
    expect(await janitor.sweep()).toBe(1);
    const left = await t.server.db.query<{ node_id: string }>('SELECT DISTINCT node_id FROM vss_objects WHERE node_id = ANY($1::text[])', [[gone, recent]]);
    expect(left.map((r) => r.node_id)).toEqual([recent]);
    expect(existsSync(join(t.config.dataDir, 'vss', 'blobs', gone!))).toBe(false);
    expect(readdirSync(join(t.config.dataDir, 'vss', 'blobs', recent!))).toHaveLength(1);
  });
});
