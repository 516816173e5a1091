// A single-item putObjects by a store's bound key is one statement that checks the URL's
// credential, the bound key and the node's status itself (db/vss.ts VssGrant), with no store read
// before it. These tests change what it checks straight in the database, as another replica would
// (nothing in this process hears of it), right after a put that went through that statement, and
// prove every refusal still holds for each kind of version (-1, 0, n) and writes nothing; that a
// conflict there is still a conflict and not a refusal; and that such a put is one statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { newVssKey, vssClient, type VssKey } from '../helpers/vss-client.ts';
import type { Database, Queryable } from '../../src/db/database.ts';
import { VssService } from '../../src/vss/vss-service.ts';
import { SigsVerifier } from '../../src/vss/sigs-auth.ts';

const AUTH = 5, CONFLICT = 1;
const v = (s: string) => Buffer.from(s);
// The messages of vss-service.ts's refusals, which say the reason.
const UNKNOWN_STORE = 'no VSS store at this URL';
const NODE_DESTROYED = "this URL's node is destroyed";
const OTHER_KEY = "another key is bound to this URL's store";

describe(`VSS single puts checked in their own statement, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
  }, 60_000);
  afterAll(() => t?.stop());

  /** A node with a store whose key is bound and whose key 'k' is at version 1 holding 'kept'. */
  async function boundStore(name: string) {
    // RUNNING first: the create build would otherwise write its status over the test's.
    const [nodeId] = await createNodes(t, alice, [{ name }]);
    const url = await t.server.services.vss.issueUrl(alice.id, nodeId!);
    const key = newVssKey();
    expect((await vssClient(url, key).put('s', [{ key: 'k', version: 0, value: v('kept') }])).status).toBe(200);
    // A second put by the bound key: the one-statement path, which this test means to follow.
    expect((await vssClient(url, key).put('s', [{ key: 'warm', version: -1, value: v('w') }])).status).toBe(200);
    return { nodeId: nodeId!, url, key };
  }

  const stored = async (nodeId: string) =>
    (await t.server.db.query<{ key: string; value: Buffer; version: string }>('SELECT key, value, version::text FROM vss_objects WHERE node_id = $1 ORDER BY key', [nodeId])).map(
      (r) => `${r.key}=${Buffer.from(r.value).toString()}@${r.version}`,
    );

  /** Every kind of single put at `url` by `key` is refused for `message`, and writes nothing. */
  async function refusedEveryWay(url: string, key: VssKey, nodeId: string, message: string) {
    const before = await stored(nodeId);
    for (const item of [
      { key: 'k', version: -1, value: v('overwritten') },
      { key: 'new', version: 0, value: v('created') },
      { key: 'k', version: 1, value: v('updated') },
    ]) {
      const answer = await vssClient(url, key).put('s', [item]);
      expect(answer.status, `version ${item.version}`).toBe(401);
      expect(answer.body).toMatchObject({ errorCode: AUTH, message });
    }
    expect(await stored(nodeId)).toEqual(before);
  }

  it("refuses every single put once the node is DESTROYING, and once it is DESTROYED", async () => {
    const { nodeId, url, key } = await boundStore('destroying');
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYING' WHERE id = $1`, [nodeId]);
    await refusedEveryWay(url, key, nodeId, NODE_DESTROYED);
    const [node] = await t.server.db.query<{ status: string }>('SELECT status FROM nodes WHERE id = $1', [nodeId]);
    expect(node!.status).toBe('DESTROYING');
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYED', destroyed_at = now() WHERE id = $1`, [nodeId]);
    await refusedEveryWay(url, key, nodeId, NODE_DESTROYED);
  });

  it('refuses a second key at a bound store, whatever the version', async () => {
    const { nodeId, url } = await boundStore('second-key');
    await refusedEveryWay(url, newVssKey(), nodeId, OTHER_KEY);
  });

  it("refuses the old URL once the node's credential is replaced (by any replica), and takes the new one", async () => {
    const { nodeId, url, key } = await boundStore('reissued');
    // What issueUrl writes, done straight in the database as another replica's issueUrl would.
    await t.server.db.query(`UPDATE vss_stores SET credential_hash = md5(random()::text) WHERE node_id = $1`, [nodeId]);
    await refusedEveryWay(url, key, nodeId, UNKNOWN_STORE);
    const fresh = await t.server.services.vss.issueUrl(alice.id, nodeId);
    expect((await vssClient(fresh, key).put('s', [{ key: 'k', version: 1, value: v('via the new URL') }])).status).toBe(200);
    await refusedEveryWay(fresh, newVssKey(), nodeId, OTHER_KEY);
  });

  it('refuses every single put once the store is removed', async () => {
    const { nodeId, url, key } = await boundStore('removed');
    await t.server.db.query('DELETE FROM vss_stores WHERE node_id = $1', [nodeId]);
    await refusedEveryWay(url, key, nodeId, UNKNOWN_STORE);
  });

  it('answers a conflict on that path as a conflict, changing nothing, and a refused invalid put as refused', async () => {
    const { nodeId, url, key } = await boundStore('conflicts');
    const before = await stored(nodeId);
    for (const item of [
      { key: 'k', version: 0, value: v('again') },
      { key: 'k', version: 7, value: v('stale') },
      { key: 'absent', version: 1, value: v('x') },
    ]) {
      const answer = await vssClient(url, key).put('s', [item]);
      expect(answer.status).toBe(409);
      expect(answer.body.errorCode).toBe(CONFLICT);
    }
    expect(await stored(nodeId)).toEqual(before);
    // An empty key is invalid; from a key that is not the store's, the refusal is said first.
    expect((await vssClient(url, newVssKey()).put('s', [{ key: '', version: -1, value: v('x') }])).body.errorCode).toBe(AUTH);
    expect((await vssClient(url, key).put('s', [{ key: '', version: -1, value: v('x') }])).status).toBe(400);
  });

  it('writes a bound key’s single put in one statement, and a first put binds its key as before', async () => {
    const [nodeId] = await createNodes(t, alice, [{ name: 'counted' }], { untilRunning: false });
    const url = new URL(await t.server.services.vss.issueUrl(alice.id, nodeId!));
    const [, , , credential] = url.pathname.split('/');
    const statements: string[] = [];
    const vss = new VssService({ db: counting(t.server.db, statements), publicUrl: t.base, verifier: new SigsVerifier(), blobs: t.server.services.vssBlobs });
    const key = newVssKey();
    const put = (version: number, value: string) =>
      vss.putObjects(nodeId!, credential!, key.token(), { storeId: 's', transactionItems: [{ key: 'k', version, value: v(value) }], deleteItems: [] });
    // The first: the statement (not granted: no key bound yet), the store read, the binding (two), the write.
    await put(0, 'first');
    expect(statements.length).toBe(5);
    for (const [version, value] of [[1, 'second'], [-1, 'third'], [0, 'fresh']] as const) {
      statements.length = 0;
      if (version === 0) await t.server.db.query(`DELETE FROM vss_objects WHERE node_id = $1`, [nodeId]);
      await put(version, value);
      expect(statements.length, `version ${version}`).toBe(1);
    }
    expect(await stored(nodeId!)).toEqual(['k=fresh@1']);
  });
});

/** The database with each statement's text recorded (transactions' included). */
function counting(db: Database, statements: string[]): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      statements.push(sql);
      return q.query(sql, params);
    },
    exec: (sql) => {
      statements.push(sql);
      return q.exec(sql);
    },
    signalAfterCommit: (s) => q.signalAfterCommit(s),
  });
  return { ...db, ...wrap(db), transaction: (fn) => db.transaction((tx) => fn(wrap(tx))) };
}
