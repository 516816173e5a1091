// Plans as data and their limits at the edge: the catalog seeded with the original's plans, the
// operator's `plan` and `account set-plan` commands, the last node a plan allows and the first it
// refuses (403 plan_limit_reached, nothing stored), concurrent creations at the edge, a downgrade
// that stops nothing, and a plan of the operator's own that upgrades automatically.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { operatorCommands } from '../../src/operator/commands.ts';
import { AppError } from '../../src/errors.ts';
import { addMember } from '../helpers/members.ts';

const args = (positional: string[], options: Record<string, string> = {}) => ({ positional, options });

describe(`plans and their limits on ${databaseLabel()}`, () => {
  let t: TestServer;
  const run = (command: string, positional: string[], options: Record<string, string> = {}) =>
    operatorCommands[command]!(t.server.services, args(positional, options)) as Promise<any>;
  const create = (user: TestUser, name: string) => t.call('/api/nodes', { method: 'POST', token: user.token, body: { name, network: 'regtest' } });
  const liveNodes = async (user: TestUser) =>
    (await t.call('/api/nodes', { token: user.token })).json.nodes.filter((n: { status: string }) => !['DESTROYING', 'DESTROYED'].includes(n.status));
  const refusal = async (p: Promise<unknown>) => p.then(() => undefined, (e: AppError) => e);

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it("seeds the original's four plans, unlimited where the original says so", async () => {
    const { plans } = await run('plan list', []);
    const byName = Object.fromEntries(plans.map((p: { name: string }) => [p.name, p]));
    expect(byName.starter).toEqual({ name: 'starter', maxNodes: 1, apiCallsPerMonth: 250_000, maxUsers: 1, autoUpgrade: false });
    expect(byName.growth).toEqual({ name: 'growth', maxNodes: 3, apiCallsPerMonth: 1_000_000, maxUsers: 1, autoUpgrade: false });
    expect(byName.scale).toEqual({ name: 'scale', maxNodes: null, apiCallsPerMonth: null, maxUsers: null, autoUpgrade: true });
    expect(byName.wallet).toEqual({ name: 'wallet', maxNodes: null, apiCallsPerMonth: null, maxUsers: null, autoUpgrade: true });
  });

  it('allows the last node of a plan and refuses the first past it, naming the limit and storing nothing', async () => {
    const user = await t.createUser('growth');
    await createNodes(t, user, [{ name: 'one' }, { name: 'two' }, { name: 'three' }], { untilRunning: false });
    const refused = await create(user, 'four');
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ code: 'plan_limit_reached', details: { limit: 'nodes', max: 3, used: 3, plan: 'growth' } });
    expect(refused.json.error.message).toBe('the growth plan allows 3 nodes and the account has 3; change the plan for more');
    expect((await liveNodes(user)).map((n: { name: string }) => n.name).sort()).toEqual(['one', 'three', 'two']);
  });

  it('counts a node being destroyed out at once, so its slot is free again', async () => {
    const user = await t.createUser('starter');
    const [first] = await createNodes(t, user, [{ name: 'first' }]);
    expect((await create(user, 'second')).status).toBe(403);
    expect((await t.call('/api/nodes', { method: 'DELETE', token: user.token, body: { destroyNodeId: first } })).status).toBe(200);
    expect((await create(user, 'second')).status).toBe(200);
  });

  it('lets exactly one of several concurrent creations at the edge through', async () => {
    const user = await t.createUser('starter');
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((name) => create(user, name)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 403, 403, 403]);
    expect(await liveNodes(user)).toHaveLength(1);
  });

  it('stops nothing on a downgrade: running nodes keep running, only new ones are refused until the limit allows', async () => {
    const user = await t.createUser('scale');
    const ids = await createNodes(t, user, [{ name: 'x' }, { name: 'y' }]);
    expect(await run('account set-plan', [user.email, 'starter'])).toEqual({ accountId: user.id, plan: 'starter', previousPlan: 'scale' });
    for (const id of ids) expect((await t.call(`/api/nodes/${id}`, { token: user.token })).json.data.status).toBe('RUNNING');
    expect((await create(user, 'z')).json.error).toMatchObject({ code: 'plan_limit_reached', details: { limit: 'nodes', max: 1, used: 2 } });
    await run('account set-plan', [user.email, 'growth']);
    expect((await create(user, 'z')).status).toBe(200);
  });

  it("changes a plan's limits with plan set, and creates the operator's own plans", async () => {
    const user = await t.createUser('starter');
    await createNodes(t, user, [{ name: 'only' }], { untilRunning: false });
    expect((await create(user, 'more')).status).toBe(403);
    const custom = await run('plan set', ['team'], { nodes: '2', 'api-calls-per-month': 'unlimited', users: '5' });
    expect(custom).toEqual({ name: 'team', maxNodes: 2, apiCallsPerMonth: null, maxUsers: 5, autoUpgrade: false });
    // Only what is given changes.
    expect(await run('plan set', ['team'], { 'auto-upgrade': 'true' })).toEqual({ ...custom, autoUpgrade: true });
    await run('account set-plan', [user.email, 'team']);
    expect((await create(user, 'more')).status).toBe(200);
    expect((await create(user, 'too many')).json.error.details).toMatchObject({ limit: 'nodes', max: 2, plan: 'team' });
    const trail = await run('audit list', [], { limit: '3' });
    expect(trail.events.map((e: { action: string }) => e.action)).toEqual(['account.plan_changed', 'plan.changed', 'plan.created']);
  });

  it('refuses bad plan commands with a message that says what is wrong', async () => {
    // Each attempt runs only when its turn comes: a refusal waiting unhandled would fail the run.
    const cases: Array<[() => Promise<unknown>, string, RegExp]> = [
      [() => run('plan set', ['Bad Name']), 'invalid_request', /is not a plan name/],
      [() => run('plan set', ['x'], { nodes: 'many' }), 'invalid_request', /--nodes must be a whole number or unlimited/],
      [() => run('plan set', ['x'], { users: '0' }), 'invalid_request', /at least 1/],
      [() => run('plan set', ['x'], { 'auto-upgrade': 'yes' }), 'invalid_request', /--auto-upgrade must be true or false/],
      [() => run('account set-plan', ['nobody@example.com', 'starter']), 'user_not_found', /no user/],
      [async () => run('account set-plan', [(await t.createUser()).email, 'platinum']), 'plan_not_found', /no plan named platinum/],
      [() => t.server.services.accounts.createUser({ email: 'x@example.com', plan: 'platinum' }), 'invalid_request', /plan must be one of .*starter/],
    ];
    for (const [attempt, code, message] of cases) {
      const e = await refusal(attempt());
      expect(e?.code).toBe(code);
      expect(e?.message).toMatch(message);
    }
  });
});

describe(`GET /api/account on ${databaseLabel()}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it("shows the caller's role, the plan's limits and this month's use of each", async () => {
    const owner = await t.createUser('growth');
    await createNodes(t, owner, [{ name: 'a' }, { name: 'b' }], { untilRunning: false });
    const r = await t.call('/api/account', { token: owner.token });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      id: owner.id,
      role: 'owner',
      plan: { name: 'growth', maxNodes: 3, apiCallsPerMonth: 1_000_000, maxUsers: 1, autoUpgrade: false },
      usage: {
        month: new Date().toISOString().slice(0, 7),
        nodes: { used: 2, running: 2, limit: 3 },
        // The two creations, this call, and whatever else the test server's meter counted so far.
        apiCalls: { used: expect.any(Number), limit: 1_000_000 },
        users: { used: 1, pendingInvitations: 0, limit: 1 },
      },
    });
    expect(r.json.usage.apiCalls.used).toBeGreaterThanOrEqual(3);
    const again = await t.call('/api/account', { token: owner.token });
    expect(again.json.usage.apiCalls.used).toBeGreaterThan(r.json.usage.apiCalls.used);
  });

  it("answers a member with their own role and the owner's account, and an unlimited plan with nulls", async () => {
    const owner = await t.createUser('scale');
    const viewer = await addMember(t, owner.id, 'viewer');
    const r = await t.call('/api/account', { token: viewer.token });
    expect(r.json).toMatchObject({
      id: owner.id,
      role: 'viewer',
      plan: { name: 'scale', maxNodes: null, apiCallsPerMonth: null, maxUsers: null, autoUpgrade: true },
      usage: { nodes: { used: 0, limit: null }, users: { used: 2, limit: null }, apiCalls: { limit: null } },
    });
    expect((await t.call('/api/account')).status).toBe(401);
  });
});
