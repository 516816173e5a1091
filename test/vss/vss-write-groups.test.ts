// Group commit of unconditional single puts (vss/write-group.ts): writes that arrive while others
// are being written go together as one statement. These tests hold the groups to what each write
// alone would do, on the real database: each write's own grant decides it (another key, another
// URL's credential, a destroyed node refused inside a group whose other writes land), a key's
// writes land in the order they came, a replaced value's blob key is reported to its write, and
// a write the database refuses fails alone. Over HTTP, a burst of puts from several nodes lands
// whole, with another key's puts in it refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { newVssKey, vssClient, type VssKey } from '../helpers/vss-client.ts';
import { hashCredential } from '../../src/vss/vss-service.ts';
import { VssWriteGroups } from '../../src/vss/write-group.ts';
import type { VssGrant, VssWrite } from '../../src/db/vss.ts';
import { parseExposition, series } from '../helpers/metrics.ts';

const v = (s: string) => Buffer.from(s);
const unconditional = (key: string, value: string | null, blobKey: string | null = null): VssWrite => ({
  key,
  version: -1,
  value: value === null ? null : v(value),
  blobKey,
  bytes: value?.length ?? 0,
});

describe(`VSS write groups, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
  }, 60_000);
  afterAll(() => t?.stop());

  /** Nodes with stores bound to a key each (a first put binds it). */
  async function boundStores(names: string[]) {
    const ids = await createNodes(t, alice, names.map((name) => ({ name })));
    return Promise.all(
      ids.map(async (nodeId) => {
        const url = await t.server.services.vss.issueUrl(alice.id, nodeId);
        const key = newVssKey();
        expect((await vssClient(url, key).put('s', [{ key: 'bound', version: -1, value: v('x') }])).status).toBe(200);
        const grant: VssGrant = { credentialHash: hashCredential(url.split('/').pop()!), pubkey: key.publicKey.toString('hex') };
        return { nodeId, url, key, grant };
      }),
    );
  }

  const stored = async (nodeId: string) =>
    (await t.server.db.query<{ key: string; value: Buffer | null; blob_key: string | null }>('SELECT key, value, blob_key FROM vss_objects WHERE node_id = $1', [nodeId])).map(
      (r) => `${r.key}=${r.value ? Buffer.from(r.value).toString() : `blob:${r.blob_key}`}`,
    ).sort();

  it('writes what arrives meanwhile as groups, each write decided by its own grant', async () => {
    const [a, b, c] = await boundStores(['grouped-a', 'grouped-b', 'grouped-c']);
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYED', destroyed_at = now() WHERE id = $1`, [c!.nodeId]);
    // One statement at a time: the first write goes alone, the rest wait and go together.
    const groups = new VssWriteGroups(t.server.db, { inFlight: 1, maxWrites: 100, maxBytes: 1 << 20 });
    const answers = await Promise.all([
      groups.write({ nodeId: a!.nodeId, storeId: 's', write: unconditional('first', 'a1'), grant: a!.grant }),
      ...Array.from({ length: 10 }, (_, i) => groups.write({ nodeId: a!.nodeId, storeId: 's', write: unconditional(`k${i}`, `a-${i}`), grant: a!.grant })),
      groups.write({ nodeId: b!.nodeId, storeId: 's', write: unconditional('k0', 'b-0'), grant: b!.grant }),
      // Another key at b's URL, a's key at b's URL, a wrong credential, a destroyed node.
      groups.write({ nodeId: b!.nodeId, storeId: 's', write: unconditional('other-key', 'no'), grant: { ...b!.grant, pubkey: newVssKey().publicKey.toString('hex') } }),
      groups.write({ nodeId: b!.nodeId, storeId: 's', write: unconditional('a-key', 'no'), grant: a!.grant }),
      groups.write({ nodeId: b!.nodeId, storeId: 's', write: unconditional('old-url', 'no'), grant: { ...b!.grant, credentialHash: hashCredential('not-it') } }),
      groups.write({ nodeId: c!.nodeId, storeId: 's', write: unconditional('destroyed', 'no'), grant: c!.grant }),
    ]);
    expect(answers.map((w) => w.applied)).toEqual([...Array(12).fill(true), false, false, false, false]);
    // Two statements: the first write alone, then the other fifteen together.
    expect(groups.stats).toEqual({ groups: 2, writes: 16 });
    expect(await stored(a!.nodeId)).toEqual(['bound=x', 'first=a1', ...Array.from({ length: 10 }, (_, i) => `k${i}=a-${i}`)].sort());
    expect(await stored(b!.nodeId)).toEqual(['bound=x', 'k0=b-0']);
    expect(await stored(c!.nodeId)).toEqual(['bound=x']);
  });

  it("lands a key's writes in the order they came, and reports each write the blob key it replaced", async () => {
    const [a] = await boundStores(['ordered']);
    const groups = new VssWriteGroups(t.server.db, { inFlight: 1, maxWrites: 100, maxBytes: 1 << 20 });
    const w = (key: string, value: string | null, blobKey: string | null = null) => groups.write({ nodeId: a!.nodeId, storeId: 's', write: unconditional(key, value, blobKey), grant: a!.grant });
    const answers = await Promise.all([w('head', 'h'), w('k', null, 'blob-1'), w('other', 'o1'), w('k', 'second'), w('other', 'o2'), w('k', null, 'blob-3'), w('k', 'last')]);
    expect(answers.map((x) => x.oldBlobKey)).toEqual([null, null, null, 'blob-1', null, null, 'blob-3']);
    expect(answers.every((x) => x.applied)).toBe(true);
    expect(await stored(a!.nodeId)).toEqual(['bound=x', 'head=h', 'k=last', 'other=o2']);
    // head alone; then k(blob-1) and other; k, other; k(blob-3); k: each key once a group.
    expect(groups.stats.groups).toBe(5);
  });

  it('lets a write the database refuses fail alone, the rest of its group landing', async () => {
    const [a] = await boundStores(['refused-row']);
    const groups = new VssWriteGroups(t.server.db, { inFlight: 1, maxWrites: 100, maxBytes: 1 << 20 });
    // A key whose index entry cannot fit PostgreSQL's B-tree (the API refuses it before: this is
    // the database's own refusal, as any row it cannot take).
    const huge = randomBytes(6000).toString('base64');
    const w = (key: string) => groups.write({ nodeId: a!.nodeId, storeId: 's', write: unconditional(key, 'v'), grant: a!.grant });
    const answers = await Promise.allSettled([w('first'), w('x1'), w(huge), w('x2')]);
    expect(answers.map((x) => x.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(await stored(a!.nodeId)).toEqual(['bound=x', 'first=v', 'x1=v', 'x2=v']);
  });

  it('lands a burst of puts from several nodes over HTTP whole, refusing another key’s puts in it', async () => {
    const stores = await boundStores(['burst-a', 'burst-b', 'burst-c']);
    const before = { ...t.server.services.vss.stores.groups.stats };
    const scrape = async () => parseExposition(await t.server.metrics.registry.metrics()).samples;
    const metricsBefore = await scrape();
    const intruder: VssKey = newVssKey();
    const puts = stores.flatMap((s, n) =>
      Array.from({ length: 20 }, (_, i) => vssClient(s.url, s.key).put('s', [{ key: `k${i}`, version: -1, value: v(`${n}-${i}`) }]).then((a) => a.status)),
    );
    const refused = stores.map((s) => vssClient(s.url, intruder).put('s', [{ key: 'k0', version: -1, value: v('intruder') }]).then((a) => a.status));
    expect(await Promise.all(puts)).toEqual(Array(60).fill(200));
    expect(await Promise.all(refused)).toEqual([401, 401, 401]);
    for (const [n, s] of stores.entries()) {
      expect(await stored(s.nodeId)).toEqual(['bound=x', ...Array.from({ length: 20 }, (_, i) => `k${i}=${n}-${i}`)].sort());
    }
    const after = t.server.services.vss.stores.groups.stats;
    // Every put went through the groups (the intruder's too, refused there before its own check).
    expect(after.writes - before.writes).toBe(63);
    // rlncloud_vss_write_group_size: one observation per statement, of its number of writes.
    const metricsAfter = await scrape();
    const moved = (name: string) => (metricsAfter.get(series(name, {})) ?? 0) - (metricsBefore.get(series(name, {})) ?? 0);
    expect(moved('rlncloud_vss_write_group_size_sum')).toBe(63);
    expect(moved('rlncloud_vss_write_group_size_count')).toBe(after.groups - before.groups);
  });
});
