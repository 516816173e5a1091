// Continuous state over real HTTP with the process runtime (issue #43): a node created on a release
// whose build has VSS (devnode) runs with --vss-url <its own URL>, and each state change it makes
// lands in its store in the service before the change is answered. The setting at creation and in
// settings, with bad input, another account and a viewer.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { addMember } from '../helpers/members.ts';
import { databaseLabel } from '../helpers/database.ts';

const PASSWORD = 'continuous-state-1';

describe(`continuous state of nodes (process runtime), on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let continuous: string;
  let plain: string;

  const node = async (id: string, user = alice) => (await t.call(`/api/nodes/${id}`, { token: user.token })).json.data;
  const settings = (id: string, body: unknown, user = alice) => t.call(`/api/nodes/${id}/settings`, { method: 'POST', token: user.token, body });
  /** The running daemon's command line, as the process runtime started it. */
  const commandLine = async (id: string) => {
    const { pid } = await t.server.runtime.status(id);
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  };
  const store = async (id: string) =>
    t.server.db.query<{ key: string; version: number; bytes: number; updated_at: Date; value: Buffer }>(
      'SELECT key, version::float8 AS version, bytes::float8 AS bytes, updated_at, value FROM vss_objects WHERE node_id = $1 ORDER BY key',
      [id],
    );
  const address = (id: string) =>
    fetch(`${t.config.nodeApiUrl}/nodes/${alice.id}/${id}/address`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t));
    [continuous] = await createNodes(t, alice, [{ name: 'continuous' }]);
    const created = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'plain', network: 'regtest', settings: { continuousState: false } } });
    expect(created.status, created.text).toBe(200);
    plain = created.json.data.nodeId;
    await t.waitForStatus(alice, plain, 'RUNNING');
  }, 90_000);
  afterAll(() => t?.stop());

  it('is on by default where the release has VSS (devnode), off when asked, and shown on the node', async () => {
    expect(t.config.initialImageVersion).toMatch(/^devnode-/);
    expect((await node(continuous)).continuousState).toBe(true);
    expect((await node(plain)).continuousState).toBe(false);
    const listed = (await t.call('/api/nodes', { token: alice.token })).json.nodes;
    expect(Object.fromEntries(listed.map((n: any) => [n.nodeId, n.continuousState]))).toMatchObject({ [continuous]: true, [plain]: false });
  });

  it("starts the daemon with its own VSS URL (the service's, with the node's id), and the other without", async () => {
    const args = await commandLine(continuous);
    const url = args[args.indexOf('--vss-url') + 1]!;
    expect(url.startsWith(`${t.config.publicUrl}/vss/${continuous}/`)).toBe(true);
    expect(args).not.toContain('--vss-allow-http'); // loopback here
    expect(await commandLine(plain)).not.toContain('--vss-url');
  });

  it("writes every state change to the node's store before answering it: the store grows with the node's state", async () => {
    expect(await store(continuous)).toEqual([]);
    expect((await t.call(`/api/nodes/${continuous}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } })).status).toBe(200);
    const unlocked = await t.call(`/api/nodes/${continuous}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(unlocked.status, unlocked.text).toBe(200);
    // The fence, taken at unlock.
    expect((await store(continuous)).map((r) => r.key)).toEqual(['__rln_instance__']);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await address(continuous);
      expect(res.status).toBe(200);
      const rows = await store(continuous);
      expect(rows.map((r) => r.key)).toEqual(['__rln_instance__', 'manager']);
      const manager = rows.find((r) => r.key === 'manager')!;
      expect(manager.bytes).toBeGreaterThan(0);
      seen.push(Buffer.from(manager.value).toString('hex'));
    }
    // Each answer found a new value already stored (sealed by the node, never the same twice).
    expect(new Set(seen).size).toBe(3);
    // Counted for the node's account like any store.
    const [{ bytes }] = (await t.server.db.query<{ bytes: number }>('SELECT sum(bytes)::float8 AS bytes FROM vss_objects WHERE node_id = $1', [continuous])) as [{ bytes: number }];
    expect(bytes).toBeGreaterThan(36);
    expect(await store(plain)).toEqual([]);
  });

  it('keeps the same URL across a stop and a start, and the stopped daemon freed its fence', async () => {
    const before = await commandLine(continuous);
    expect((await t.call(`/api/nodes/${continuous}/stop`, { method: 'POST', token: alice.token })).status).toBe(200);
    await t.waitForStatus(alice, continuous, 'PAUSED');
    expect((await store(continuous)).map((r) => r.key)).toEqual(['manager']);
    expect((await t.call(`/api/nodes/${continuous}/start`, { method: 'POST', token: alice.token })).status).toBe(200);
    await t.waitForStatus(alice, continuous, 'RUNNING');
    const after = await commandLine(continuous);
    expect(after[after.indexOf('--vss-url') + 1]).toBe(before[before.indexOf('--vss-url') + 1]);
    const unlocked = await t.call(`/api/nodes/${continuous}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(unlocked.status, unlocked.text).toBe(200);
    expect((await address(continuous)).status).toBe(200);
  });

  it('a daemon killed without a clean stop leaves its fence; the runtime releases it before the next start, so the node unlocks', async () => {
    const { pid } = await t.server.runtime.status(continuous);
    expect((await store(continuous)).map((r) => r.key)).toContain('__rln_instance__');
    process.kill(pid!, 'SIGKILL');
    // The reconcile loop starts a new daemon; it unlocks (a fence left held would refuse it: VssFenced).
    const deadline = Date.now() + 30_000;
    let unlocked: Awaited<ReturnType<typeof t.call>> | undefined;
    while (Date.now() < deadline) {
      const now = await t.server.runtime.status(continuous);
      if (now.state === 'running' && now.pid !== pid) {
        unlocked = await t.call(`/api/nodes/${continuous}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
        if (unlocked.status === 200) break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(unlocked?.status, unlocked?.text).toBe(200);
    expect((await address(continuous)).status).toBe(200);
  }, 45_000);

  it("reaches the node's /vssbackupinfo and /vssclearfence through the node gateway, as any RLN route: not for a viewer nor another account", async () => {
    const gateway = (user: TestUser, route: string, init: RequestInit = {}) =>
      fetch(`${t.config.nodeApiUrl}/nodes/${alice.id}/${continuous}/${route}`, { ...init, headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' } });
    const info = await gateway(alice, 'vssbackupinfo');
    expect(info.status).toBe(200);
    expect(await info.json()).toEqual({ backup_exists: true, server_version: 1, backup_required: false, pending_kv_writes: 0 });
    const viewer = await addMember(t, alice.id, 'viewer');
    const clear = { method: 'POST', body: JSON.stringify({ password: PASSWORD }) };
    expect((await gateway(viewer, 'vssclearfence', clear)).status).toBe(403);
    expect((await gateway(bob, 'vssclearfence', clear)).status).toBeGreaterThanOrEqual(403);
    expect((await gateway(bob, 'vssbackupinfo')).status).toBeGreaterThanOrEqual(403);
    // The node is unlocked: RLN refuses to clear its own fence (UnlockedNode), and the fence stays.
    const own = await gateway(alice, 'vssclearfence', clear);
    expect(own.status).toBe(403);
    expect((await own.json()).name).toBe('UnlockedNode');
    expect((await store(continuous)).map((r) => r.key)).toContain('__rln_instance__');
  });

  it('is changed in settings (bad input refused; another account and a viewer cannot)', async () => {
    const bad = await settings(plain, { settings: { continuousState: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_request');
    expect((await settings(plain, { settings: { continuousState: true } }, bob)).status).toBe(404);
    const viewer = await addMember(t, alice.id, 'viewer');
    const refused = await settings(plain, { settings: { continuousState: true } }, viewer);
    expect(refused.status).toBe(403);
    expect((await node(plain)).continuousState).toBe(false);
    expect((await settings(plain, { settings: { continuousState: true } })).status).toBe(200);
    expect((await node(plain)).continuousState).toBe(true);
    // The webhook URL is left alone by a change of continuousState alone.
    expect((await node(plain)).settings).toEqual({});
  });

  it('is refused where the release has no VSS client, and off by default there', async () => {
    await t.server.services.releases.publish('rln-without-vss');
    const refused = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'refused', network: 'regtest', settings: { continuousState: true } } });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('continuous_state_unsupported');
    const created = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'old-release', network: 'regtest' } });
    expect(created.status, created.text).toBe(200);
    expect(created.json.data.node.continuousState).toBe(false);
    const turnOn = await settings(created.json.data.nodeId, { settings: { continuousState: true } });
    expect(turnOn.status).toBe(409);
    expect(turnOn.json.error.code).toBe('continuous_state_unsupported');
  });
});
