// GET /api/usage through real HTTP on a real database, and the monthly API call quota on the
// management API and the bearer gateway (429 quota_exceeded, Retry-After, RateLimit fields).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';

const QUOTA = 8;
let t: TestServer;
let alice: TestUser;
let bob: TestUser;
let nodeIds: readonly string[];
let bobNode: string;

const thisMonth = () => new Date().toISOString().slice(0, 7);
const gateway = (user: TestUser, nodeId: string) =>
  fetch(`http://127.0.0.1:${t.config.nodeApiPort}/${user.id}/${nodeId}`, { headers: { authorization: `Bearer ${user.token}` } });

beforeAll(async () => {
  t = await startTestServer({ USAGE_FLUSH_BATCH: '2', USAGE_FLUSH_INTERVAL_MS: '200' });
  await t.server.db.query(`INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users) VALUES ('tiny', 1, $1, 1)`, [QUOTA]);
  alice = await t.createUser('growth');
  bob = await t.createUser('starter');
  nodeIds = await createNodes(t, alice, [{ name: 'usage-a1' }, { name: 'usage-a2' }]);
  [bobNode] = await createNodes(t, bob, [{ name: 'usage-b1' }]);
}, 120_000);
afterAll(() => t?.stop());

describe(`GET /api/usage (${databaseLabel()})`, () => {
  it("answers this month's usage of the caller's account, per node, in total and per day", async () => {
    expect((await gateway(alice, nodeIds[0]!)).status).toBe(200);
    // A call in a batch being written at that moment is in neither the replica's count nor the
    // database's yet: the answer has it within a batch's write (docs/USAGE.md).
    let r = await t.call('/api/usage', { token: alice.token });
    for (let i = 0; i < 20 && r.json.total.gatewayCalls !== 1; i++) {
      await new Promise((done) => setTimeout(done, 100));
      r = await t.call('/api/usage', { token: alice.token });
    }
    expect(r.status).toBe(200);
    const month = thisMonth();
    expect(r.json).toMatchObject({ month, closed: false, from: `${month}-01T00:00:00.000Z` });
    expect(r.json.nodes.map((n: { nodeId: string }) => n.nodeId).sort()).toEqual([...nodeIds].sort());
    expect(r.json.nodes.find((n: { nodeId: string }) => n.nodeId === nodeIds[0])).toMatchObject({ name: 'usage-a1', gatewayCalls: 1 });
    // The nodes are RUNNING since their builds: their time counts, and every day is listed.
    expect(r.json.total.runningSeconds).toBeGreaterThanOrEqual(0);
    expect(r.json.total.apiCalls).toBeGreaterThan(0);
    expect(r.json.total.gatewayCalls).toBe(1);
    const days = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5)), 0)).getUTCDate();
    expect(r.json.days).toHaveLength(days);
    expect(r.json.days[0].date).toBe(`${month}-01`);
    // Whole seconds are cut per node in the total and per day over the nodes: at most a second per node apart.
    const daySum = r.json.days.reduce((s: number, d: { runningSeconds: number }) => s + d.runningSeconds, 0);
    expect(Math.abs(daySum - r.json.total.runningSeconds)).toBeLessThanOrEqual(nodeIds.length);
  });

  it("never shows another account's nodes, not even one named in a path", async () => {
    // Alice's call about Bob's node is counted in her account as a call about no node.
    expect((await t.call(`/api/nodes/${bobNode}`, { token: alice.token })).status).toBe(404);
    const r = await t.call(`/api/usage?month=${thisMonth()}`, { token: alice.token });
    expect(JSON.stringify(r.json)).not.toContain(bobNode!);
    const b = await t.call('/api/usage', { token: bob.token });
    expect(b.json.nodes.map((n: { nodeId: string }) => n.nodeId)).toEqual([bobNode]);
  });

  it('shows a token limited to some nodes those nodes only', async () => {
    const scoped = await t.server.services.accounts.createToken(alice.email, 'one-node', undefined, { nodeIds: [nodeIds[1]!] });
    const r = await t.call('/api/usage', { token: scoped.token });
    expect(r.status).toBe(200);
    expect(r.json.nodes.map((n: { nodeId: string }) => n.nodeId)).toEqual([nodeIds[1]]);
    expect(r.json.total.gatewayCalls).toBe(0);
  });

  it.each(['2026-13', '26-11', 'november', '2026-1', '9999-01'])('refuses month=%s with 400 invalid_request', async (month) => {
    const r = await t.call(`/api/usage?month=${month}`, { token: alice.token });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('invalid_request');
  });

  it('answers a past month with nothing in it, and refuses one that ended before the account existed (issue #37)', async () => {
    const before = await t.call('/api/usage?month=2020-02', { token: alice.token });
    expect(before.status).toBe(400);
    expect(before.json.error).toMatchObject({ code: 'invalid_request', details: { firstMonth: expect.stringMatching(/^\d{4}-\d{2}$/) } });
    // An account that existed then (as one made in 2020 would have).
    const old = await t.createUser();
    await t.server.db.query(`UPDATE accounts SET created_at = '2020-01-15T00:00:00Z' WHERE id = $1`, [old.id]);
    const r = await t.call('/api/usage?month=2020-02', { token: old.token });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ month: '2020-02', nodes: [], total: { runningSeconds: 0, pausedSeconds: 0, apiCalls: 0, gatewayCalls: 0 } });
    expect(r.json.days).toHaveLength(29);
  });
});

describe(`GET /api/usage: who spent the calls (${databaseLabel()})`, () => {
  it('shows calls per member (tokens and web session together) and per token, management and gateway alike', async () => {
    const owner = await t.createUser('growth');
    const [node] = await createNodes(t, owner, [{ name: 'usage-callers' }]);
    const member = await addMember(t, owner.id, 'developer');
    const second = await t.server.services.accounts.createToken(owner.email, 'second');
    await t.server.services.meter.flush();
    const calls = async () => {
      await t.server.services.meter.flush();
      const r = await t.call('/api/usage', { token: owner.token });
      expect(r.status).toBe(200);
      return r.json as { members: Array<{ userId: string; email: string; calls: number }>; tokens: Array<{ tokenId: string; name: string; userId: string; calls: number }> };
    };
    const before = await calls();
    const ofMember = (u: typeof before, id: string) => u.members.find((m) => m.userId === id)?.calls ?? 0;
    const ofToken = (u: typeof before, id: string) => u.tokens.find((k) => k.tokenId === id)?.calls ?? 0;
    for (let i = 0; i < 3; i++) expect((await t.call(`/api/nodes/${node}`, { token: member.token })).status).toBe(200);
    // The gateway path names the node's account (its owner), whoever of its members calls.
    const viaGateway = await fetch(`http://127.0.0.1:${t.config.nodeApiPort}/${owner.id}/${node}`, { headers: { authorization: `Bearer ${member.token}` } });
    expect(viaGateway.status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await t.call('/api/nodes', { token: second.token })).status).toBe(200);
    const after = await calls();
    expect(ofMember(after, member.id) - ofMember(before, member.id)).toBe(4);
    expect(ofToken(after, member.tokenId) - ofToken(before, member.tokenId)).toBe(4);
    expect(ofToken(after, second.id) - ofToken(before, second.id)).toBe(2);
    // The owner's member row counts both of their tokens (and the GET /api/usage calls themselves).
    expect(ofMember(after, owner.id) - ofMember(before, owner.id)).toBe(2 + 1);
    expect(after.members.find((m) => m.userId === member.id)?.email).toBe(member.email);
    expect(after.tokens.find((k) => k.tokenId === second.id)).toMatchObject({ name: 'second', userId: owner.id });
    // A token limited to some nodes sees none of them: they are the account's.
    const scoped = await t.server.services.accounts.createToken(owner.email, 'scoped', undefined, { nodeIds: [node!] });
    const limited = await t.call('/api/usage', { token: scoped.token });
    expect(limited.json).toMatchObject({ members: [], tokens: [] });
  });
});

describe(`the monthly API call quota (${databaseLabel()})`, () => {
  it('refuses management API and gateway calls past the plan limit with 429 quota_exceeded until the next month', async () => {
    const carol = await t.createUser('tiny');
    const [carolNode] = await createNodes(t, carol, [{ name: 'usage-c1' }], { untilRunning: false });
    let refused: Awaited<ReturnType<TestServer['call']>> | undefined;
    let admitted = 1; // the create
    for (let i = 0; i < QUOTA * 3 && !refused; i++) {
      const r = await t.call('/api/nodes', { token: carol.token });
      if (r.status === 429) refused = r;
      else admitted++;
    }
    expect((refused?.json as { error: { code: string } }).error.code).toBe('quota_exceeded');
    // One replica, batch 2: at most limit + 2 - 1 admitted (docs/USAGE.md).
    expect(admitted).toBeGreaterThanOrEqual(QUOTA);
    expect(admitted).toBeLessThanOrEqual(QUOTA + 1);
    const nextMonth = new Date();
    nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1, 1);
    nextMonth.setUTCHours(0, 0, 0, 0);
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(Math.abs(Date.now() + retryAfter * 1000 - nextMonth.getTime())).toBeLessThan(5_000);
    expect(refused!.headers.get('ratelimit')).toBe(`"monthly-api-calls";r=0;t=${retryAfter}`);
    expect(refused!.headers.get('ratelimit-policy')).toMatch(new RegExp(`^"monthly-api-calls";q=${QUOTA};w=\\d+$`));
    const g = await gateway(carol, carolNode!);
    expect(g.status).toBe(429);
    expect(g.headers.get('retry-after')).toBeTruthy();
    // The gateways answer in RLN's error shape, the service's code under rln_cloud.
    expect(((await g.json()) as { rln_cloud: { code: string } }).rln_cloud.code).toBe('quota_exceeded');
    // Another account is not affected.
    expect((await t.call('/api/usage', { token: alice.token })).status).toBe(200);
  });
});
