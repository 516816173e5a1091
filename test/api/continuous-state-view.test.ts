// GET /api/nodes/{id}/continuous-state over real HTTP with the process runtime (issue #43, point 4):
// the store's last write and size as the service's rows say, and the daemon's pending writes from
// its /vssbackupinfo. Writes VSS refuses (a trigger makes every write of the store fail, reads
// still answer) leave the daemon with pending writes: the route shows them, the pending writes
// meter records them and the rlncloud_vss_nodes_with_pending_writes gauge counts the node, until
// VSS takes writes again and the daemon's next write sends them. A viewer reads it; another
// account's node, a malformed id and a missing node are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { addMember } from '../helpers/members.ts';
import { databaseLabel } from '../helpers/database.ts';
import { parseExposition, series } from '../helpers/metrics.ts';

const PASSWORD = 'continuous-state-2';

async function until<T>(probe: () => Promise<T | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error('the meter recorded no sample in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`a node's continuous state on its page's route (process runtime), on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let node: string;
  let plain: string;

  const read = (id: string, user = alice) => t.call(`/api/nodes/${id}/continuous-state`, { token: user.token });
  const address = () => fetch(`${t.config.nodeApiUrl}/nodes/${alice.id}/${node}/address`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
  const gauge = async () =>
    parseExposition(await (await fetch(`http://127.0.0.1:${t.config.metricsPort}/metrics`)).text()).samples.get(series('rlncloud_vss_nodes_with_pending_writes'));
  const rows = async () =>
    (await t.server.db.query<{ last: Date | null; bytes: number }>(
      `SELECT max(updated_at) FILTER (WHERE key <> '__rln_instance__') AS last, coalesce(sum(bytes), 0)::float8 AS bytes FROM vss_objects WHERE node_id = $1`,
      [node],
    ))[0]!;

  beforeAll(async () => {
    // The pending writes meter passes every second here (a minute by default).
    t = await startTestServer({ VSS_PENDING_CHECK_INTERVAL_MS: '1000' });
    ({ alice, bob } = await createTenants(t));
    [node] = await createNodes(t, alice, [{ name: 'continuous' }]);
    const created = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'plain', network: 'regtest', settings: { continuousState: false } } });
    expect(created.status, created.text).toBe(200);
    plain = created.json.data.nodeId;
    await t.waitForStatus(alice, plain, 'RUNNING');
  }, 90_000);
  afterAll(() => t?.stop());

  it('before the wallet is unlocked: the store is there and empty, the daemon not asked (locked)', async () => {
    const res = await read(node);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ nodeId: node, enabled: true, store: { bound: false, lastWriteAt: null, bytes: 0, keys: 0 } });
    expect(res.json.data.daemon).toEqual({ checked: false, reason: expect.stringMatching(/locked/), pendingWrites: null, backupRequired: null, backupExists: null });
  });

  it('once unlocked and writing: the last write and the bytes are the rows\', and the daemon has nothing pending', async () => {
    expect((await t.call(`/api/nodes/${node}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } })).status).toBe(200);
    expect((await t.call(`/api/nodes/${node}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } })).status).toBe(200);
    // The fence alone is not a state write.
    expect((await read(node)).json.data.store).toMatchObject({ bound: true, lastWriteAt: null, keys: 1 });
    expect((await address()).status).toBe(200);
    const { data } = (await read(node)).json;
    const facts = await rows();
    expect(data.store).toEqual({ bound: true, lastWriteAt: facts.last!.toISOString(), bytes: facts.bytes, keys: 2 });
    expect(data.store.bytes).toBeGreaterThan(0);
    expect(data.daemon).toEqual({ checked: true, reason: null, pendingWrites: 0, backupRequired: false, backupExists: true });
    expect(await gauge()).toBe(0);
  });

  it('shows the writes VSS refused as pending, the meter records them and the gauge counts the node, until VSS takes them', async () => {
    const before = (await read(node)).json.data.store.lastWriteAt;
    await t.server.db.exec(`
      CREATE FUNCTION refuse_vss_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'VSS writes refused by the test'; END $$;
      CREATE TRIGGER refuse_vss_writes BEFORE INSERT OR UPDATE ON vss_objects FOR EACH ROW EXECUTE FUNCTION refuse_vss_writes();`);
    try {
      // The daemon writes locally, VSS fails the put: the state change is not acknowledged and stays pending.
      expect((await address()).status).not.toBe(200);
      const { data } = (await read(node)).json;
      expect(data.daemon).toMatchObject({ checked: true, pendingWrites: 1, backupRequired: true });
      expect(data.store.lastWriteAt).toBe(before);
      expect(await gauge()).toBe(1);
      // The meter (one replica, every VSS_PENDING_CHECK_INTERVAL_MS) asks on its own: the sample it records is what the gauge reads.
      await t.server.db.query('DELETE FROM vss_pending_samples');
      const samples = await until(async () => {
        const found = await t.server.db.query<{ node_id: string; pending_writes: number }>('SELECT node_id, pending_writes FROM vss_pending_samples');
        return found.length > 0 && found;
      });
      // The plain node is running but does not write to VSS: not sampled.
      expect(samples).toEqual([{ node_id: node, pending_writes: 1 }]);
      expect(await gauge()).toBe(1);
    } finally {
      await t.server.db.exec('DROP TRIGGER refuse_vss_writes ON vss_objects; DROP FUNCTION refuse_vss_writes();');
    }
    // VSS takes writes again: the next state change sends the pending one with it.
    expect((await address()).status).toBe(200);
    const { data } = (await read(node)).json;
    expect(data.daemon).toMatchObject({ pendingWrites: 0, backupRequired: false });
    expect(Date.parse(data.store.lastWriteAt)).toBeGreaterThan(Date.parse(before));
    expect(await gauge()).toBe(0);
  });

  it('a node without continuous state: no store, the daemon not asked', async () => {
    const { data } = (await read(plain)).json;
    expect(data).toMatchObject({ enabled: false, store: null, daemon: { checked: false, reason: expect.stringMatching(/does not write/) } });
  });

  it('a stopped node: the store is still read, the daemon not asked', async () => {
    expect((await t.call(`/api/nodes/${node}/stop`, { method: 'POST', token: alice.token })).status).toBe(200);
    await t.waitForStatus(alice, node, 'PAUSED');
    const { data } = (await read(node)).json;
    expect(data.store).toMatchObject({ bound: true, keys: 1 });
    expect(data.store.lastWriteAt).not.toBeNull();
    expect(data.daemon).toMatchObject({ checked: false, reason: expect.stringMatching(/not running/) });
    // The sample of a node no longer running does not count.
    expect(await gauge()).toBe(0);
  });

  it('a viewer reads it; another account, a malformed id and a missing node are refused', async () => {
    const viewer = await addMember(t, alice.id, 'viewer');
    expect((await read(node, viewer)).status).toBe(200);
    const other = await read(node, bob);
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('node_not_found');
    const malformed = await read('not-a-node');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('invalid_request');
    expect((await read('0'.repeat(32))).status).toBe(404);
  });
});
