// Start, stop, upgrade (with rollback), lock state, waiting and idempotent creation through real
// HTTP, with real devnode daemons. Each endpoint: the happy path, bad input, another user's attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';

describe(`node lifecycle on ${databaseLabel()}`, () => {
  let t: TestServer;
  let starter: TestUser;
  let other: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer();
    starter = await t.createUser();
    other = await t.createUser('growth');
    const r = await t.call('/api/nodes', { method: 'POST', token: starter.token, body: { name: 'life', network: 'regtest' } });
    nodeId = r.json.data.nodeId;
  });
  afterAll(() => t?.stop());

  const post = (path: string, user: TestUser = starter) => t.call(path, { method: 'POST', token: user.token });
  const getNode = async (id = nodeId, user = starter) => (await t.call(`/api/nodes/${id}`, { token: user.token })).json.data;
  const waitFor = async (status: string, id = nodeId, user = starter) => {
    const r = await t.call(`/api/nodes/${id}?waitFor=${status}&timeout=30`, { token: user.token });
    expect(r.status).toBe(200);
    expect(r.json.data.status).toBe(status);
    return r.json.data;
  };
  const waitForBuilds = async (count: number, id = nodeId) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const node = await getNode(id);
      if (node.builds.length >= count && node.builds.every((b: any) => b.buildComplete)) return node;
      if (Date.now() > deadline) throw new Error(`builds did not complete: ${JSON.stringify(node.builds)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const events = async (id = nodeId) =>
    (await t.server.db.query<{ event_type: string; payload: any }>('SELECT event_type, payload FROM node_events WHERE node_id = $1 ORDER BY id', [id]));

  it('refuses start and stop while the create build runs', async () => {
    const start = await post(`/api/nodes/${nodeId}/start`);
    expect(start.status).toBe(409);
    expect(start.json.error.code).toBe('build_in_progress');
    const upgrade = await post(`/api/nodes/${nodeId}/upgrade`);
    expect(upgrade.status).toBe(409);
  });

  it('waits for a status with ?waitFor and answers with the node', async () => {
    const node = await waitFor('RUNNING');
    expect(node.locked).toBe(true);
  });

  it('rejects bad waitFor and timeout values', async () => {
    for (const q of ['waitFor=running', 'waitFor=SOON', 'waitFor=RUNNING&timeout=abc', 'waitFor=RUNNING&timeout=-1', 'waitFor=RUNNING&timeout=1.5', 'waitFor=RUNNING&timeout=61', 'waitFor=RUNNING&timeout=99', 'wait=RUNNING']) {
      const r = await t.call(`/api/nodes/${nodeId}?${q}`, { token: starter.token });
      expect(r.status, q).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
    }
    // One plain sentence each, no schema internals.
    const timeout = await t.call(`/api/nodes/${nodeId}?waitFor=RUNNING&timeout=99`, { token: starter.token });
    expect(timeout.json.error.message).toBe('timeout must be a whole number of seconds from 0 to 60');
    const status = await t.call(`/api/nodes/${nodeId}?waitFor=SOON`, { token: starter.token });
    expect(status.json.error.message).toMatch(/^waitFor must be STARTING, RUNNING, .* or DESTROYED$/);
  });

  it('answers a wait that times out with the node as it is', async () => {
    const r = await t.call(`/api/nodes/${nodeId}?waitFor=PAUSED&timeout=0`, { token: starter.token });
    expect(r.status).toBe(200);
    expect(r.json.data.status).toBe('RUNNING');
  });

  it('refuses to start a running node', async () => {
    const r = await post(`/api/nodes/${nodeId}/start`);
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'already_running', message: expect.stringContaining(nodeId) });
  });

  it('refuses every action on a destroyed node', async () => {
    const created = await t.call('/api/nodes', { method: 'POST', token: other.token, body: { name: 'short-lived', network: 'testnet' } });
    const id = created.json.data.nodeId;
    await waitFor('RUNNING', id, other);
    expect((await t.call('/api/nodes', { method: 'DELETE', token: other.token, body: { destroyNodeId: id } })).status).toBe(200);
    await waitFor('DESTROYED', id, other);
    for (const action of ['start', 'stop', 'upgrade']) {
      const r = await post(`/api/nodes/${id}/${action}`, other);
      expect(r.status, action).toBe(409);
      expect(r.json.error.code).toBe('node_destroyed');
    }
  });
  it('stops a node into PAUSED, keeping its storage, and refuses a second stop', async () => {
    const r = await post(`/api/nodes/${nodeId}/stop`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ message: expect.any(String), data: { nodeId, status: expect.any(String) } });
    await waitFor('PAUSED');
    expect((await t.server.runtime.status(nodeId)).state).toBe('stopped');
    const again = await post(`/api/nodes/${nodeId}/stop`);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('already_stopped');
  });

  it('refuses to upgrade a PAUSED node', async () => {
    await t.server.services.releases.publish(`v2-${Date.now()}`);
    const r = await post(`/api/nodes/${nodeId}/upgrade`);
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('node_not_running');
  });

  it('starts a PAUSED node of a starter user on its own version, locked', async () => {
    const before = await getNode();
    const r = await post(`/api/nodes/${nodeId}/start`);
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({ nodeId, status: 'STARTING' });
    const node = await waitFor('RUNNING');
    expect(node.locked).toBe(true);
    expect(node.rln_commit_id).toBe(before.rln_commit_id);
    expect(node.builds.map((b: any) => [b.action, b.buildStatus])).toEqual([
      ['create', 'SUCCESS'],
      ['stop', 'SUCCESS'],
      ['start', 'SUCCESS'],
    ]);
  });

  it('is unlocked by the gateway’s service call and locked again by the next daemon start', async () => {
    await t.server.services.nodes.markUnlocked(nodeId);
    expect((await getNode()).locked).toBe(false);
    const types = (await events()).map((e) => e.event_type);
    expect(types).toContain('NODE_UNLOCKED');
  });

  it('upgrades a RUNNING node to the latest version: IN_PROGRESS and locked, then RUNNING, locked, on the new version', async () => {
    const latest = (await t.call('/api/nodes/latest-rln-image', { token: starter.token })).json.data;
    const r = await post(`/api/nodes/${nodeId}/upgrade`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ message: expect.stringContaining(latest) });
    const during = await getNode();
    expect(during).toMatchObject({ status: 'IN_PROGRESS', locked: true });
    const node = await waitFor('RUNNING');
    expect(node).toMatchObject({ rln_commit_id: latest, locked: true });
    expect(node.builds.at(-1)).toMatchObject({ action: 'upgrade', buildStatus: 'SUCCESS', imageVersion: latest });
    expect((await t.server.runtime.status(nodeId)).imageVersion).toBe(latest);
    const last = (await events()).filter((e) => e.event_type.startsWith('NODE_UPGRADE'));
    expect(last.map((e) => e.event_type)).toEqual(['NODE_UPGRADE_AVAILABLE', 'NODE_UPGRADE_COMPLETED']);
  });

  it('answers 409 nothing_to_upgrade on the latest version', async () => {
    const r = await post(`/api/nodes/${nodeId}/upgrade`);
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('nothing_to_upgrade');
  });

  it('rolls back an upgrade whose version does not come up, recording the reason', async () => {
    const good = (await getNode()).rln_commit_id;
    const builds = (await getNode()).builds.length;
    await t.server.services.releases.publish(`fail-${Date.now()}`);
    expect((await post(`/api/nodes/${nodeId}/upgrade`)).status).toBe(200);
    const node = await waitForBuilds(builds + 1);
    expect(node).toMatchObject({ status: 'RUNNING', locked: true, rln_commit_id: good });
    expect(node.builds.at(-1)).toMatchObject({ action: 'upgrade', buildStatus: 'FAILURE' });
    expect(node.builds.at(-1).error).toMatch(new RegExp(`did not come up healthy.*rolled back to ${good}`));
    expect((await t.server.runtime.status(nodeId))).toMatchObject({ state: 'running', imageVersion: good });
    expect((await events()).at(-1)?.event_type).toBe('NODE_UPGRADE_FAILED');
  });

  it('answers 404 to another user and to unknown nodes, 400 to malformed ids', async () => {
    for (const action of ['start', 'stop', 'upgrade']) {
      const foreign = await post(`/api/nodes/${nodeId}/${action}`, other);
      expect(foreign.status, action).toBe(404);
      expect(foreign.json.error.code).toBe('node_not_found');
      expect((await post(`/api/nodes/${'0'.repeat(32)}/${action}`)).status).toBe(404);
      expect((await post(`/api/nodes/not-an-id/${action}`)).status).toBe(400);
    }
    expect((await getNode()).status).toBe('RUNNING');
  });

});

describe(`idempotent node creation on ${databaseLabel()}`, () => {
  let t: TestServer;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestServer();
    user = await t.createUser();
  });
  afterAll(() => t?.stop());

  const create = (body: unknown, key?: string, token = user.token) =>
    t.call('/api/nodes', { method: 'POST', token, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const count = async () => (await t.call('/api/nodes', { token: user.token })).json.nodes.length;

  it('returns the first answer to a retry with the same key and body, creating nothing', async () => {
    const first = await create({ name: 'idem', network: 'regtest' }, 'key-1');
    expect(first.status).toBe(200);
    const retry = await create({ network: 'regtest', name: 'idem' }, 'key-1');
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual(first.json);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await count()).toBe(1);
  });

  it('answers 409 to the same key with another body', async () => {
    const r = await create({ name: 'other', network: 'regtest' }, 'key-1');
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('idempotency_conflict');
    expect(await count()).toBe(1);
  });

  it('keeps keys per user', async () => {
    const stranger = await t.createUser();
    const r = await create({ name: 'idem', network: 'regtest' }, 'key-1', stranger.token);
    expect(r.status).toBe(200);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
  });

  it('creates once under concurrent retries with one key', async () => {
    const answers = await Promise.all([1, 2, 3].map(() => create({ name: 'race', network: 'testnet' }, 'key-race')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.json.data.nodeId)).size).toBe(1);
    expect(await count()).toBe(2);
  });

  it('rejects a malformed key and leaves no key behind a failed request', async () => {
    expect((await create({ name: 'x', network: 'regtest' }, 'has space')).status).toBe(400);
    expect((await create({ name: 'x', network: 'regtest' }, 'k'.repeat(256))).status).toBe(400);
    const bad = await create({ name: 'x', network: 'mainnet' }, 'key-2');
    expect(bad.status).toBe(400);
    const good = await create({ name: 'x', network: 'regtest' }, 'key-2');
    expect(good.status).toBe(200);
    expect(good.headers.get('idempotent-replayed')).toBeNull();
    expect(await count()).toBe(3);
  });

  it('gives a first answer stored before data.node existed the node as it is now (a retry across an update)', async () => {
    const first = await create({ name: 'stored before', network: 'regtest' }, 'key-old');
    expect(first.json.data.node.nodeId).toBe(first.json.data.nodeId);
    // As the previous version stored it: SPEC.md's fields only.
    await t.server.db.query(`UPDATE idempotency_keys SET response_body = response_body #- '{data,node}' WHERE key = 'key-old'`);
    const retry = await create({ name: 'stored before', network: 'regtest' }, 'key-old');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const now = (await t.call(`/api/nodes/${first.json.data.nodeId}`, { token: user.token })).json.data;
    expect(retry.json.data).toEqual({ ...first.json.data, node: { ...now, status: expect.any(String), updatedAt: expect.any(String), builds: expect.any(Array), locked: expect.any(Boolean), peerDNS: expect.any(String), peerPort: expect.any(Number) } });
    expect(retry.json.data.node.nodeId).toBe(first.json.data.nodeId);
  });
});
