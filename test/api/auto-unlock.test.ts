// Automatic unlock through real HTTP with real devnode daemons: PUT checks the password against the
// node and keeps it sealed (never in clear in the database), and the node is unlocked again after
// a user's stop and start, a daemon the reconcile loop restarts, a release rollout and a rollback,
// and a restart of the whole service; DELETE erases it; a password changed on the node turns it off
// with an event; bad input stores nothing. The security cases shared by every route are in
// bearer-auth.test.ts (bearer-routes.ts).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, testConfig, type CallResult, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { startRestartableServer } from '../logs/restartable-server.ts';
import { startServer } from '../../src/app.ts';
import { createLogger } from '../../src/logger.ts';
import { autoUnlockAssociatedData } from '../../src/nodes/unlock/auto-unlock.ts';
import type { Database } from '../../src/db/database.ts';

const PASSWORD = 'auto-unlock-password-1';
const NEW_PASSWORD = 'changed-on-the-node-2';

/** The calls every suite here makes, against whichever server it runs. */
function helpers(server: () => { db: Database; base: string; nodeApiUrl: string }) {
  const call = async (user: TestUser, path: string, opts: { method?: string; body?: unknown } = {}): Promise<CallResult> => {
    const headers: Record<string, string> = { authorization: `Bearer ${user.token}` };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server().base}${path}`, { method: opts.method ?? 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, json, text, headers: res.headers };
  };
  const node = async (user: TestUser, id: string) => (await call(user, `/api/nodes/${id}`)).json.data;
  const waitForNode = async (user: TestUser, id: string, what: string, ok: (n: any) => boolean, timeoutMs = 45_000) => {
    const deadline = Date.now() + timeoutMs;
    let last: any;
    for (;;) {
      last = await node(user, id);
      if (ok(last)) return last;
      if (Date.now() > deadline) throw new Error(`node ${id} did not become ${what}; last seen ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const gateway = (user: TestUser, id: string, route: string, body: object = {}) =>
    rawRequest(server().nodeApiUrl, `/${user.id}/${id}/${route}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    });
  const sealedOf = async (id: string) =>
    (await server().db.query<{ auto_unlock_sealed: string | null }>('SELECT auto_unlock_sealed FROM nodes WHERE id = $1', [id]))[0]!.auto_unlock_sealed;
  const events = async (id: string) =>
    server().db.query<{ event_type: string; payload: any }>('SELECT event_type, payload FROM node_events WHERE node_id = $1 ORDER BY id', [id]);
  const createInitialized = async (user: TestUser, name: string) => {
    const created = await call(user, '/api/nodes', { method: 'POST', body: { name, network: 'regtest' } });
    const id = created.json.data.nodeId as string;
    await waitForNode(user, id, 'RUNNING', (n) => n?.status === 'RUNNING');
    const init = await call(user, `/api/nodes/${id}/init`, { method: 'POST', body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    return id;
  };
  const unlocked = (n: any) => n?.status === 'RUNNING' && n.locked === false;
  const lockedEvents = async (id: string) => (await events(id)).filter((e) => e.event_type === 'NODE_LOCKED').length;
  /**
   * After something restarts the daemon of an unlocked node: it is recorded locked (one more
   * NODE_LOCKED) and then unlocked again. Polling the node alone could miss the short locked spell.
   */
  const waitLockedThenUnlocked = async (user: TestUser, id: string, lockedBefore: number, timeoutMs = 45_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // The events first: a node read before them could be the unlocked one from before the lock
      // they show (a busy machine once slipped a kill's lock in between).
      const locked = (await lockedEvents(id)) > lockedBefore;
      const n = await node(user, id);
      if (locked && unlocked(n)) return n;
      if (Date.now() > deadline) throw new Error(`node ${id} was not locked and unlocked again; last seen ${JSON.stringify(n)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { call, node, waitForNode, gateway, sealedOf, events, createInitialized, unlocked, lockedEvents, waitLockedThenUnlocked };
}

describe(`automatic unlock on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;
  const h = helpers(() => ({ db: t.server.db, base: t.base, nodeApiUrl: t.config.nodeApiUrl }));
  const put = (password: string, id = nodeId, user = alice) => h.call(user, `/api/nodes/${id}/auto-unlock`, { method: 'PUT', body: { password } });
  const del = (id = nodeId, user = alice) => h.call(user, `/api/nodes/${id}/auto-unlock`, { method: 'DELETE' });
  const post = (path: string, user = alice) => h.call(user, path, { method: 'POST' });

  beforeAll(async () => {
    t = await startTestServer();
    // Scale: release rollouts upgrade alice's nodes automatically.
    alice = await t.createUser('scale');
    bob = await t.createUser();
    const created = await h.call(alice, '/api/nodes', { method: 'POST', body: { name: 'auto', network: 'regtest' } });
    nodeId = created.json.data.nodeId;
    await h.waitForNode(alice, nodeId, 'RUNNING', (n) => n?.status === 'RUNNING');
  }, 60_000);
  afterAll(() => t?.stop());

  it('shows autoUnlock: false on a new node, and refuses to turn it on before the wallet exists', async () => {
    expect(await h.node(alice, nodeId)).toMatchObject({ autoUnlock: false, locked: true, initialized: false });
    const r = await put(PASSWORD);
    expect(r.status, r.text).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'node_state_conflict', message: expect.stringContaining('/init') });
    expect(await h.sealedOf(nodeId)).toBeNull();
  });

  it('refuses a wrong password with 403 wrong_password and stores nothing', async () => {
    expect((await h.call(alice, `/api/nodes/${nodeId}/init`, { method: 'POST', body: { password: PASSWORD } })).status).toBe(200);
    const r = await put('not-the-password');
    expect(r.status, r.text).toBe(403);
    expect(r.json.error.code).toBe('wrong_password');
    expect(r.text).not.toContain('not-the-password');
    expect(await h.sealedOf(nodeId)).toBeNull();
    expect(await h.node(alice, nodeId)).toMatchObject({ autoUnlock: false, locked: true });
  });

  it('refuses bodies without a password, never echoing one', async () => {
    for (const body of [{}, { password: '' }, { password: 5 }, { password: PASSWORD, extra: 1 }]) {
      const r = await h.call(alice, `/api/nodes/${nodeId}/auto-unlock`, { method: 'PUT', body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.text).not.toContain(PASSWORD);
    }
    const res = await fetch(`${t.base}/api/nodes/${nodeId}/auto-unlock`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: `{"password": "${PASSWORD}"`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain(PASSWORD);
  });

  it('checks the password with a real unlock, keeps it sealed, and shows only autoUnlock: true', async () => {
    const r = await put(PASSWORD);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ data: { nodeId, autoUnlock: true, passwordChecked: true, locked: false }, message: expect.any(String) });
    const node = await h.node(alice, nodeId);
    expect(node).toMatchObject({ autoUnlock: true, locked: false });
    expect(JSON.stringify(node)).not.toContain(PASSWORD);
    expect(JSON.stringify((await h.call(alice, '/api/nodes')).json)).not.toContain('us1.');

    const sealed = (await h.sealedOf(nodeId))!;
    expect(sealed).toMatch(/^us1\.usk_[0-9a-f]{16}\./);
    expect(sealed).not.toContain(PASSWORD);
    expect(sealed).not.toContain(Buffer.from(PASSWORD).toString('base64').slice(0, 12));
    expect(t.server.services.unlockSeal.open(sealed, autoUnlockAssociatedData(nodeId))).toBe(PASSWORD);
    // Nowhere else in the database either: not in the node's row, its events or the jobs.
    for (const [what, sql] of [
      ['nodes', 'SELECT row_to_json(n)::text AS t FROM nodes n'],
      ['events', 'SELECT payload::text AS t FROM node_events'],
      ['jobs', 'SELECT payload::text AS t FROM jobs'],
    ]) {
      const rows = await t.server.db.query<{ t: string }>(sql!);
      expect(rows.filter((row) => row.t.includes(PASSWORD)), what).toEqual([]);
    }
  });

  it('stores the password unchecked when the node is unlocked already, saying so', async () => {
    const r = await put(PASSWORD);
    expect(r.status, r.text).toBe(200);
    expect(r.json.data).toEqual({ nodeId, autoUnlock: true, passwordChecked: false, locked: false });
    expect(r.json.message).toMatch(/checked at its next start/);
  });

  it('unlocks the node after a stop and a start', async () => {
    expect((await post(`/api/nodes/${nodeId}/stop`)).status).toBe(200);
    await h.waitForNode(alice, nodeId, 'PAUSED', (n) => n?.status === 'PAUSED');
    expect((await post(`/api/nodes/${nodeId}/start`)).status).toBe(200);
    await h.waitForNode(alice, nodeId, 'RUNNING and unlocked', h.unlocked);
    // Locked by the start, then unlocked by the service.
    const types = (await h.events(nodeId)).map((e) => e.event_type);
    expect(types.slice(types.lastIndexOf('NODE_LOCKED'))).toContain('NODE_UNLOCKED');
    // The daemon itself agrees: it answers what only an unlocked node answers.
    const r = await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(r.status).toBe(200);
  }, 60_000);

  it('unlocks the node after the reconcile loop restarts a daemon killed from outside', async () => {
    const lockedBefore = await h.lockedEvents(nodeId);
    const pid = (await t.server.runtime.status(nodeId)).pid!;
    process.kill(pid, 'SIGKILL');
    await h.waitLockedThenUnlocked(alice, nodeId, lockedBefore);
    expect((await t.server.runtime.status(nodeId)).pid).not.toBe(pid);
  }, 60_000);

  it('refuses PUT on a PAUSED node, turns off on any, and answers another user 404', async () => {
    const other = await h.createInitialized(alice, 'paused');
    expect((await post(`/api/nodes/${other}/stop`)).status).toBe(200);
    await h.waitForNode(alice, other, 'PAUSED', (n) => n?.status === 'PAUSED');
    const r = await put(PASSWORD, other);
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'node_not_running', details: { status: 'PAUSED' } });
    expect(await h.sealedOf(other)).toBeNull();
    const off = await del(other);
    expect(off.status).toBe(200);
    expect(off.json.data).toMatchObject({ nodeId: other, autoUnlock: false });

    for (const r of [await put(PASSWORD, nodeId, bob), await del(nodeId, bob)]) {
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('node_not_found');
    }
    expect(await h.node(alice, nodeId)).toMatchObject({ autoUnlock: true });
  }, 60_000);

  it('erases the sealed password when the node is destroyed, and refuses PUT then', async () => {
    const id = await h.createInitialized(alice, 'doomed');
    expect((await put(PASSWORD, id)).status).toBe(200);
    expect(await h.sealedOf(id)).not.toBeNull();
    expect((await h.call(alice, '/api/nodes', { method: 'DELETE', body: { destroyNodeId: id } })).status).toBe(200);
    expect(await h.sealedOf(id)).toBeNull();
    await h.waitForNode(alice, id, 'DESTROYED', (n) => n.status === 'DESTROYED');
    const r = await put(PASSWORD, id);
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('node_destroyed');
  }, 60_000);
  it('unlocks the node after a release rollout upgrades it, and after a failed upgrade is rolled back', async () => {
    const version = `v2-${Date.now()}`;
    await t.server.services.releases.publish(version);
    await h.waitForNode(alice, nodeId, `unlocked on ${version}`, (n) => h.unlocked(n) && n.rln_commit_id === version);
    expect((await h.node(alice, nodeId)).builds.at(-1)).toMatchObject({ action: 'upgrade', buildStatus: 'SUCCESS' });

    const builds = (await h.node(alice, nodeId)).builds.length;
    await t.server.services.releases.publish(`fail-${Date.now()}`);
    const rolledBack = await h.waitForNode(alice, nodeId, 'rolled back and unlocked', (n) => n.builds.length > builds && n.builds.at(-1).buildComplete && h.unlocked(n), 60_000);
    expect(rolledBack.rln_commit_id).toBe(version);
    expect(rolledBack.builds.at(-1)).toMatchObject({ action: 'upgrade', buildStatus: 'FAILURE' });
  }, 120_000);

  it('turns itself off with NODE_AUTO_UNLOCK_DISABLED when the password was changed on the node', async () => {
    expect((await h.gateway(alice, nodeId, 'lock')).status).toBe(200);
    await h.waitForNode(alice, nodeId, 'locked', (n) => n.locked === true);
    const changed = await h.gateway(alice, nodeId, 'changepassword', { old_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(changed.status, changed.text).toBe(200);

    const pid = (await t.server.runtime.status(nodeId)).pid!;
    process.kill(pid, 'SIGKILL');
    const node = await h.waitForNode(alice, nodeId, 'auto-unlock off', (n) => n.autoUnlock === false);
    expect(node).toMatchObject({ status: 'RUNNING', locked: true });
    expect(await h.sealedOf(nodeId)).toBeNull();
    const disabled = (await h.events(nodeId)).filter((e) => e.event_type === 'NODE_AUTO_UNLOCK_DISABLED');
    expect(disabled.map((e) => e.payload.details)).toEqual([{ nodeId, reason: 'wrong_password' }]);
  }, 60_000);

  it('erases the sealed password on DELETE: the next start leaves the node locked', async () => {
    const on = await put(NEW_PASSWORD);
    expect(on.status, on.text).toBe(200);
    expect(on.json.data).toMatchObject({ passwordChecked: true, locked: false });
    const off = await del();
    expect(off.status).toBe(200);
    expect(off.json).toEqual({ data: { nodeId, autoUnlock: false, passwordChecked: false, locked: false }, message: expect.any(String) });
    expect(await h.sealedOf(nodeId)).toBeNull();
    expect((await del()).status).toBe(200);

    const pid = (await t.server.runtime.status(nodeId)).pid!;
    process.kill(pid, 'SIGKILL');
    await h.waitForNode(alice, nodeId, 'restarted', (n) => n.locked === true);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await h.node(alice, nodeId)).toMatchObject({ status: 'RUNNING', locked: true, autoUnlock: false });
    // Turned off by the user: no event says the service did it.
    expect((await h.events(nodeId)).filter((e) => e.event_type === 'NODE_AUTO_UNLOCK_DISABLED')).toHaveLength(1);
  }, 60_000);

});

describe(`automatic unlock across service restarts and key rotation on ${databaseLabel()}`, () => {
  let s: Awaited<ReturnType<typeof startRestartableServer>>;
  let alice: TestUser;
  let nodeId: string;
  const h = helpers(() => ({ db: s.server().db, base: s.config.publicUrl, nodeApiUrl: s.config.nodeApiUrl }));

  beforeAll(async () => {
    s = await startRestartableServer({ RECONCILE_INTERVAL_MS: '1000' });
    const accounts = s.server().services.accounts;
    const email = `restart-${Date.now()}@example.com`;
    const user = await accounts.createUser({ email, plan: 'starter' });
    const token = await accounts.createToken(email, 'test');
    alice = { id: user.id, email, token: token.token, tokenId: token.id };
    nodeId = await h.createInitialized(alice, 'survivor');
    const r = await h.call(alice, `/api/nodes/${nodeId}/auto-unlock`, { method: 'PUT', body: { password: PASSWORD } });
    expect(r.status, r.text).toBe(200);
  }, 60_000);
  afterAll(() => s?.stop());

  it('unlocks the node again after the whole service restarted (its daemon restarted with it)', async () => {
    const pid = (await s.server().runtime.status(nodeId)).pid;
    const lockedBefore = await h.lockedEvents(nodeId);
    await s.restart();
    const node = await h.waitLockedThenUnlocked(alice, nodeId, lockedBefore);
    expect(node.autoUnlock).toBe(true);
    expect((await s.server().runtime.status(nodeId)).pid).not.toBe(pid);
  }, 90_000);

  it('rotates the key while serving: every sealed password re-sealed, the old key dropped, unlocks still work', async () => {
    const before = (await h.sealedOf(nodeId))!;
    const keys = s.server().services.unlockSealKeys;
    const result = await keys.rotate();
    // The auto-unlock password, the node's VSS URL credential (continuous state, vss/node-urls.ts) and
    // its Biscuit root key (issue #40), which unlocks need too.
    expect(result).toMatchObject({ resealed: 3, unreadable: 0, previousKeyIds: [before.split('.')[1]] });
    const after = (await h.sealedOf(nodeId))!;
    expect(after.split('.')[1]).toBe(result.keyId);
    expect(after).not.toBe(before);

    let lockedBefore = await h.lockedEvents(nodeId);
    process.kill((await s.server().runtime.status(nodeId)).pid!, 'SIGKILL');
    await h.waitLockedThenUnlocked(alice, nodeId, lockedBefore);
    // And after a restart, which reads the rotated file afresh.
    lockedBefore = await h.lockedEvents(nodeId);
    await s.restart();
    await h.waitLockedThenUnlocked(alice, nodeId, lockedBefore);
  }, 90_000);

  it('stops the start with a clear message when UNLOCK_SEAL_KEY_FILE names a file that is missing or not a keyring', async () => {
    const log = createLogger('silent');
    const otherDir = mkdtempSync(join(tmpdir(), 'rln-test-'));
    try {
      const missing = await testConfig(otherDir, undefined, { UNLOCK_SEAL_KEY_FILE: join(otherDir, 'no-such-file') });
      await expect(startServer(missing, log)).rejects.toThrow(/UNLOCK_SEAL_KEY_FILE: cannot read .*no-such-file.*ENOENT/);
      const garbage = join(otherDir, 'garbage-keys');
      writeFileSync(garbage, 'not a key');
      const invalid = await testConfig(otherDir, undefined, { UNLOCK_SEAL_KEY_FILE: garbage });
      await expect(startServer(invalid, log)).rejects.toThrow(/UNLOCK_SEAL_KEY_FILE: .*garbage-keys is not an unlock seal keyring/);
      // Nothing was created in its place.
      expect(existsSync(join(otherDir, 'unlock-seal-keys.json'))).toBe(false);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  }, 30_000);
});
