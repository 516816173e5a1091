// Release rollouts across users and plans: only Scale and Wallet nodes move, the concurrency bound
// holds, PAUSED nodes are upgraded on their next start, and the failure budget pauses a rollout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';

describe(`release rollouts on ${databaseLabel()}`, () => {
  let t: TestServer;
  const users: Record<string, TestUser> = {};
  const nodesOf: Record<string, string[]> = { scale: [], wallet: [], starter: [], growth: [] };
  let pausedNode: string;

  const create = async (user: TestUser, name: string) =>
    (await t.call('/api/nodes', { method: 'POST', token: user.token, body: { name, network: 'regtest' } })).json.data.nodeId as string;
  const getNode = async (user: TestUser, id: string) => (await t.call(`/api/nodes/${id}`, { token: user.token })).json.data;
  const waitForRollout = async (version: string, state: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const s = await t.server.services.releases.status(version);
      if (s.state === state) return s;
      if (Date.now() > deadline) throw new Error(`rollout ${version} did not become ${state}: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };

  beforeAll(async () => {
    t = await startTestServer();
    for (const plan of ['scale', 'wallet', 'starter', 'growth'] as const) users[plan] = await t.createUser(plan);
    for (let i = 0; i < 3; i++) nodesOf.scale!.push(await create(users.scale!, `s${i}`));
    nodesOf.wallet!.push(await create(users.wallet!, 'w0'));
    nodesOf.starter!.push(await create(users.starter!, 'st0'));
    nodesOf.growth!.push(await create(users.growth!, 'g0'));
    pausedNode = await create(users.scale!, 'paused');
    for (const [plan, ids] of Object.entries(nodesOf)) {
      for (const id of ids) await t.waitForStatus(users[plan]!, id, 'RUNNING');
    }
    await t.waitForStatus(users.scale!, pausedNode, 'RUNNING');
    await t.call(`/api/nodes/${pausedNode}/stop`, { method: 'POST', token: users.scale!.token });
    await t.waitForStatus(users.scale!, pausedNode, 'PAUSED');
  }, 120_000);
  afterAll(() => t?.stop());

  it('upgrades every running Scale and Wallet node, two at a time, and leaves the other plans alone', async () => {
    const version = `v2-${Date.now()}`;
    const published = await t.server.services.releases.publish(version, { concurrency: 2 });
    expect(published.rollout).toMatchObject({ concurrency: 2, nodes: 5, started: 2 });
    const done = await waitForRollout(version, 'completed');
    expect(done.nodes).toMatchObject({ succeeded: 4, deferred: 1, failed: 0, pending: 0, upgrading: 0 });

    for (const id of [...nodesOf.scale!, ...nodesOf.wallet!]) {
      const owner = nodesOf.scale!.includes(id) ? users.scale! : users.wallet!;
      const node = await getNode(owner, id);
      expect(node).toMatchObject({ status: 'RUNNING', locked: true, rln_commit_id: version });
      expect(node.builds.at(-1)).toMatchObject({ action: 'upgrade', buildStatus: 'SUCCESS' });
    }
    for (const plan of ['starter', 'growth']) {
      const node = await getNode(users[plan]!, nodesOf[plan]![0]!);
      expect(node.rln_commit_id).toBe(t.config.initialImageVersion);
      expect(node.builds.map((b: any) => b.action)).toEqual(['create']);
    }

    // The concurrency bound, from the recorded build intervals: never more than 2 upgrades at once.
    const builds = await t.server.db.query<{ started_at: Date; finished_at: Date }>(
      `SELECT started_at, finished_at FROM builds WHERE action = 'upgrade' AND image_version = $1`,
      [version],
    );
    expect(builds).toHaveLength(4);
    const overlapAt = (when: number) => builds.filter((b) => b.started_at.getTime() <= when && when < b.finished_at.getTime()).length;
    expect(Math.max(...builds.map((b) => overlapAt(b.started_at.getTime())))).toBeLessThanOrEqual(2);

    const available = await t.server.db.query<{ node_id: string }>(
      `SELECT node_id FROM node_events WHERE event_type = 'NODE_UPGRADE_AVAILABLE' AND payload->'details'->>'version' = $1`,
      [version],
    );
    expect(available.map((e) => e.node_id).sort()).toEqual([...nodesOf.starter!, ...nodesOf.growth!].sort());
  }, 90_000);

  it('upgrades a PAUSED Scale node when it is next started, not before', async () => {
    const before = await getNode(users.scale!, pausedNode);
    expect(before).toMatchObject({ status: 'PAUSED', rln_commit_id: t.config.initialImageVersion });
    const latest = (await t.call('/api/nodes/latest-rln-image', { token: users.scale!.token })).json.data;
    await t.call(`/api/nodes/${pausedNode}/start`, { method: 'POST', token: users.scale!.token });
    const node = await t.waitForStatus(users.scale!, pausedNode, 'RUNNING');
    expect(node).toMatchObject({ rln_commit_id: latest, locked: true });
    expect(node.builds.at(-1)).toMatchObject({ action: 'start', imageVersion: latest, buildStatus: 'SUCCESS' });
    expect((await t.server.services.releases.status(latest)).nodes).toMatchObject({ succeeded: 5, deferred: 0 });
  }, 60_000);

  it('pauses a rollout once more upgrades fail than its budget allows, and resumes on request', async () => {
    const version = `fail-${Date.now()}`;
    await t.server.services.releases.publish(version, { concurrency: 1, failureBudget: 1 });
    const paused = await waitForRollout(version, 'paused');
    expect(paused.nodes.failed).toBe(2);
    expect(paused.nodes.pending).toBe(3);
    expect(paused.pausedReason).toMatch(/2 upgrades failed.*budget of 1/);
    // Failed upgrades were rolled back: those nodes still run their previous version.
    for (const id of nodesOf.scale!.slice(0, 2)) {
      const node = await getNode(users.scale!, id);
      expect(node.status).toBe('RUNNING');
      expect(node.rln_commit_id).not.toBe(version);
      expect(node.builds.at(-1)).toMatchObject({ buildStatus: 'FAILURE', error: expect.stringContaining('rolled back') });
    }
    // Nothing moves while paused, even when the reconcile loop passes.
    await t.server.services.releases.advanceAll();
    expect((await t.server.services.releases.status(version)).nodes.pending).toBe(3);

    const resumed = await t.server.services.releases.resume(version, 0);
    expect(resumed.failureBudget).toBe(2);
    const again = await waitForRollout(version, 'paused');
    expect(again.nodes.failed).toBe(3);
  }, 90_000);

  it('refuses malformed and duplicate versions without a second rollout', async () => {
    for (const bad of ['', ' ', '-lead', 'a/b', 'x'.repeat(65), 'v 1']) {
      await expect(t.server.services.releases.publish(bad)).rejects.toMatchObject({ code: 'invalid_request' });
    }
    const latest = (await t.server.services.releases.list()).at(-1)!.version;
    await expect(t.server.services.releases.publish(latest)).rejects.toMatchObject({ code: 'release_exists' });
    const rollouts = await t.server.db.query('SELECT version FROM rollouts WHERE version = $1', [latest]);
    expect(rollouts).toHaveLength(1);
    await expect(t.server.services.releases.status('never-published')).rejects.toMatchObject({ code: 'release_not_found' });
  });
});
