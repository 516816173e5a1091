// The authentication rollout (issue #40, point 5) over real HTTP with real devnode daemons: nodes
// whose daemon still runs without RLN's authentication are restarted a few at a time through a
// `restart` build, come back locked (automatic unlock unlocking those where it is on) and refuse a
// caller without a Biscuit from then on; a node not running is skipped, one that already runs with
// authentication is not enrolled, and a restart that fails counts against the failure budget.
import { parseExposition, series } from '../helpers/metrics.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { findNode } from '../../src/db/nodes.ts';
import { specOf } from '../../src/nodes/builds/build-job.ts';
import type { ProcessRuntime } from '../../src/runtime/process.ts';

const PASSWORD = 'authentication-rollout-1';
const UNAUTHORIZED = '{"error":"Missing or invalid credentials","code":401,"name":"Unauthorized"}';

describe(`the authentication rollout on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  const node = async (id: string) => (await t.call(`/api/nodes/${id}`, { token: alice.token })).json.data;
  const create = async (name: string) => {
    const id = (await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name, network: 'regtest' } })).json.data.nodeId as string;
    await t.waitForStatus(alice, id, 'RUNNING', 45_000);
    return id;
  };
  const portOf = async (id: string) => (await t.server.db.query<{ rest_port: number }>('SELECT rest_port FROM nodes WHERE id = $1', [id]))[0]!.rest_port;
  /** The node's own port, reached without the gateways and without a Biscuit. */
  const direct = async (id: string) => rawRequest(`http://127.0.0.1:${await portOf(id)}`, '/nodeinfo');
  const hasRootKey = async (id: string) => (await t.server.db.query('SELECT 1 FROM node_root_keys WHERE node_id = $1', [id])).length === 1;

  /**
   * The node as the service left it before issue #40: its daemon started with
   * --disable-authentication and no root key recorded. The runtime is asked to start it once
   * without its key store, as that service's runtime was built.
   */
  const runWithoutAuthentication = async (id: string) => {
    const runtime = t.server.runtime as ProcessRuntime;
    // The runtime's options are private: reached here only to stand in for the older service.
    const options = (runtime as unknown as { opts: { rootKeys?: unknown } }).opts;
    const keys = options.rootKeys;
    await t.server.db.query('DELETE FROM node_root_keys WHERE node_id = $1', [id]);
    options.rootKeys = undefined;
    try {
      await runtime.stop(id);
      await runtime.start(specOf((await findNode(t.server.db, id))!));
    } finally {
      options.rootKeys = keys;
    }
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = await direct(id).catch(() => undefined);
      // devnode without authentication answers a locked node's 403 to anyone.
      if (r?.status === 403) return;
      if (r?.status === 401) throw new Error(`node ${id} still runs with authentication`);
      if (Date.now() > deadline) throw new Error(`node ${id} did not come back without authentication`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const waitForRollout = async (state: string) => {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const s = await t.server.services.authenticationRollout.status();
      if (s.state === state) return s;
      if (Date.now() > deadline) throw new Error(`the authentication rollout did not become ${state}: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };

  let autoUnlocked: string;
  let locked: string;
  let alreadyOn: string;
  let paused: string;

  beforeAll(async () => {
    // The reconcile loop would restart a daemon stopped by hand here with its key: slowed down, it
    // leaves the test's stand-in for an older daemon alone.
    t = await startTestServer({ RECONCILE_INTERVAL_MS: '600000' });
    alice = await t.createUser();
    const created = await Promise.all(['auto', 'locked', 'on', 'paused'].map(create));
    [autoUnlocked, locked, alreadyOn, paused] = created as [string, string, string, string];
    for (const id of [autoUnlocked, locked]) await runWithoutAuthentication(id);
    // The one whose owner turned automatic unlock on: initialised and unlocked while it runs without authentication.
    expect((await t.call(`/api/nodes/${autoUnlocked}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } })).status).toBe(200);
    const auto = await t.call(`/api/nodes/${autoUnlocked}/auto-unlock`, { method: 'PUT', token: alice.token, body: { password: PASSWORD } });
    expect(auto.status, auto.text).toBe(200);
    expect(await node(autoUnlocked)).toMatchObject({ locked: false, autoUnlock: true });
    await t.call(`/api/nodes/${paused}/stop`, { method: 'POST', token: alice.token });
    await t.waitForStatus(alice, paused, 'PAUSED');
    await t.server.db.query('DELETE FROM node_root_keys WHERE node_id = $1', [paused]);
  }, 180_000);
  afterAll(() => t?.stop());

  it('restarts the nodes without authentication one at a time; they come back locked, unlocked where automatic unlock is on, and refuse a caller without a Biscuit', async () => {
    const before = (await t.server.db.query("SELECT count(*)::int AS n FROM node_events WHERE node_id = $1 AND event_type = 'NODE_LOCKED'", [autoUnlocked]))[0] as { n: number };
    const started = await t.server.services.authenticationRollout.start({ concurrency: 1, failureBudget: 0 });
    expect(started).toMatchObject({ state: 'running', concurrency: 1, failureBudget: 0, nodes: 3, started: 1 });
    const done = await waitForRollout('completed');
    expect(done.nodes).toEqual({ pending: 0, restarting: 0, succeeded: 2, failed: 0, skipped: 1 });

    for (const id of [autoUnlocked, locked]) {
      const n = await node(id);
      expect(n.builds.at(-1)).toMatchObject({ action: 'restart', buildStatus: 'SUCCESS', imageVersion: n.rln_commit_id });
      expect(await hasRootKey(id)).toBe(true);
      const r = await direct(id);
      expect(r.status).toBe(401);
      expect(r.text).toBe(UNAUTHORIZED);
    }
    expect(await node(locked)).toMatchObject({ status: 'RUNNING', locked: true });
    // Locked by the restart (one more NODE_LOCKED), then unlocked by the service with the sealed password.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const after = (await t.server.db.query("SELECT count(*)::int AS n FROM node_events WHERE node_id = $1 AND event_type = 'NODE_LOCKED'", [autoUnlocked]))[0] as { n: number };
      const n = await node(autoUnlocked);
      if (Number(after.n) > Number(before.n) && n.status === 'RUNNING' && n.locked === false) break;
      if (Date.now() > deadline) throw new Error(`node ${autoUnlocked} was not locked and unlocked again: ${JSON.stringify(n)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
    // Through the gateway, which sends the node a Biscuit of the new key, it answers as before.
    const viaGateway = await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${autoUnlocked}/nodeinfo`, { headers: { authorization: `Bearer ${alice.token}` } });
    expect(viaGateway.status, viaGateway.text).toBe(200);

    // One at a time: the two restarts never overlapped.
    const builds = await t.server.db.query<{ started_at: Date; finished_at: Date }>(
      "SELECT started_at, finished_at FROM builds WHERE action = 'restart' AND node_id = ANY($1) ORDER BY started_at",
      [[autoUnlocked, locked]],
    );
    expect(builds).toHaveLength(2);
    expect(builds[1]!.started_at.getTime()).toBeGreaterThanOrEqual(builds[0]!.finished_at.getTime());

    // The node already running with authentication was not enrolled; the paused one was skipped, untouched.
    expect((await node(alreadyOn)).builds.map((b: any) => b.action)).toEqual(['create']);
    expect((await node(paused)).builds.map((b: any) => b.action)).toEqual(['create', 'stop']);
    const skipped = await t.server.db.query<{ node_id: string; error: string }>("SELECT node_id, error FROM authentication_rollout_nodes WHERE state = 'skipped'");
    expect(skipped).toEqual([{ node_id: paused, error: expect.stringContaining('next start') }]);
  }, 120_000);

  it('refuses a second rollout while one is paused, pauses once restarts fail past the budget, and resumes on request', async () => {
    const broken = await create('broken');
    await runWithoutAuthentication(broken);
    // A version whose daemon does not come up (devnode's fail-*): its restart fails. Recorded as a
    // version (the latest, which no node created after this one takes).
    await t.server.db.query("INSERT INTO image_versions (version) VALUES ('fail-restart')");
    await t.server.db.query("UPDATE nodes SET image_version = 'fail-restart' WHERE id = $1", [broken]);
    await t.server.services.authenticationRollout.start({ concurrency: 2, failureBudget: 0 });
    const pausedRollout = await waitForRollout('paused');
    expect(pausedRollout.nodes).toMatchObject({ failed: 1, pending: 0, restarting: 0 });
    expect(pausedRollout.pausedReason).toMatch(/1 restarts failed.*budget of 0/);
    expect(pausedRollout.failed).toEqual([{ nodeId: broken, buildNumber: expect.any(Number), reason: expect.stringContaining('fail-restart') }]);
    expect(await node(broken)).toMatchObject({ status: 'FAILED' });

    await expect(t.server.services.authenticationRollout.start()).rejects.toMatchObject({ code: 'invalid_state', message: expect.stringContaining('paused') });
    // What an operator's alert reads (RlnCloudAuthenticationRolloutPaused): the state, and the nodes by state.
    const scraped = parseExposition(await t.server.metrics.registry.metrics()).samples;
    expect(scraped.get(series('rlncloud_authentication_rollout', { state: 'paused' }))).toBe(1);
    expect(scraped.get(series('rlncloud_authentication_rollout', { state: 'running' }))).toBe(0);
    expect(scraped.get(series('rlncloud_authentication_rollout_nodes', { state: 'failed' }))).toBe(1);
    const resumed = await t.server.services.authenticationRollout.resume(1);
    expect(resumed.failureBudget).toBe(2);
    expect((await waitForRollout('completed')).nodes.failed).toBe(1);
  }, 120_000);
});
