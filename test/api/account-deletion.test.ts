// The owner deletes their account over real HTTP (issue #45): with their password; refused while
// nodes live unless destroyNodes confirms their destruction; every member's user and credentials
// go; the audit trail and the usage records stay for the operator.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';
import { createNodes } from '../helpers/tenants.ts';
import { purgeDeletedAccounts } from '../../src/db/account-deletion.ts';

const PASSWORD = 'owner password 1';

describe(`deleting an account on ${databaseLabel()}`, () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  const owned = async () => {
    const owner = await t.createUser('scale');
    await t.server.services.accounts.setPassword(owner.email, PASSWORD);
    return owner;
  };
  const del = (by: TestUser, body?: unknown) => t.call('/api/account', { method: 'DELETE', token: by.token, body });
  const count = async (sql: string, accountId: string) => Number((await t.server.db.query<{ n: number }>(sql, [accountId]))[0]!.n);
  const rowsOf = (accountId: string) =>
    Promise.all([
      count('SELECT count(*)::int AS n FROM accounts WHERE id = $1', accountId),
      count('SELECT count(*)::int AS n FROM account_members WHERE account_id = $1', accountId),
      count('SELECT count(*)::int AS n FROM audit_events WHERE user_id = $1', accountId),
      count('SELECT count(*)::int AS n FROM node_status_changes WHERE account_id = $1', accountId),
    ]).then(([accounts, members, audit, usage]) => ({ accounts, members, audit, usage }));
  const statusOf = async (nodeId: string) => (await t.server.db.query<{ status: string }>('SELECT status FROM nodes WHERE id = $1', [nodeId]))[0]?.status;

  it('refuses a wrong or missing password, a non-owner, and live nodes without destroyNodes; nothing changes', async () => {
    const owner = await owned();
    const admin = await addMember(t, owner.id, 'admin');
    const [nodeId] = await createNodes(t, owner, [{ name: 'live' }], { untilRunning: false });

    const wrong = await del(owner, { password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.json.error.code).toBe('wrong_password');
    expect((await del(owner)).status).toBe(400);
    expect((await del(owner, {})).status).toBe(400);
    expect((await del(owner, { password: PASSWORD, destroyNodes: 'yes' })).status).toBe(400);
    const byAdmin = await del(admin, { password: PASSWORD, destroyNodes: true });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.json.error).toMatchObject({ code: 'forbidden_role', details: { role: 'admin', leastRole: 'owner' } });
    for (const body of [{ password: PASSWORD }, { password: PASSWORD, destroyNodes: false }]) {
      const live = await del(owner, body);
      expect(live.status).toBe(409);
      expect(live.json.error).toMatchObject({ code: 'invalid_state', details: { liveNodes: 1, nodeIds: [nodeId] } });
      expect(live.json.error.message).toContain('destroyNodes');
    }
    expect((await t.call('/api/nodes', { token: owner.token })).status).toBe(200);
    expect((await t.call('/api/nodes', { token: admin.token })).status).toBe(200);
    expect(await statusOf(nodeId)).not.toMatch(/DESTROY/);
    expect((await rowsOf(owner.id)).members).toBe(2);
  });

  it('limits wrong passwords per owner: after five, 429 even with the right one', async () => {
    const owner = await owned();
    for (let i = 0; i < 5; i++) expect((await del(owner, { password: `guess ${i}` })).status).toBe(403);
    const limited = await del(owner, { password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect((await t.call('/api/nodes', { token: owner.token })).status).toBe(200);
  });

  it('with destroyNodes: destroys the nodes first, ends every member at once, and the record goes once they are destroyed', async () => {
    const owner = await owned();
    const viewer = await addMember(t, owner.id, 'viewer');
    const [nodeId] = await createNodes(t, owner, [{ name: 'doomed' }]);
    // A certificate from before accounts records no issuer: it must go too.
    const issued = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: owner.token });
    expect(issued.status, issued.text).toBe(200);
    await t.server.db.query('UPDATE client_certificates SET issued_by = NULL WHERE user_id = $1', [owner.id]);
    const signedIn = await t.call('/api/session', { method: 'POST', body: { email: owner.email, password: PASSWORD } });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const r = await t.call('/api/account', { method: 'DELETE', body: { password: PASSWORD, destroyNodes: true }, headers: { cookie, 'x-csrf-token': signedIn.json.csrfToken } });
    expect([202, 204], r.text).toContain(r.status);
    if (r.status === 202) expect(r.json).toEqual({ status: 'deleting', destroyingNodeIds: [nodeId] });
    for (const token of [owner.token, viewer.token]) expect((await t.call('/api/nodes', { token })).status).toBe(401);
    expect((await t.call('/api/session', { headers: { cookie } })).status).toBe(401);
    expect((await rowsOf(owner.id)).members).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM client_certificates WHERE user_id = $1', owner.id)).toBe(0);
    await expect.poll(() => statusOf(nodeId), { timeout: 30_000 }).toBe('DESTROYED');
    await purgeDeletedAccounts(t.server.db);
    const after = await rowsOf(owner.id);
    expect(after).toMatchObject({ accounts: 0, members: 0 });
    expect(await statusOf(nodeId)).toBeUndefined();
    // What stays for the operator: the audit trail (the deletion in it) and the usage records.
    await expect
      .poll(async () => (await t.server.db.query<{ action: string }>('SELECT action FROM audit_events WHERE user_id = $1', [owner.id])).map((e) => e.action))
      .toContain('account.deleted');
    expect(after.usage).toBeGreaterThan(0);
    // The addresses are free again.
    expect((await t.server.services.accounts.createUser({ email: owner.email, plan: 'starter' })).email).toBe(owner.email);
  });

  it('without live nodes: deleted at once (204), the record and every member gone, audit and usage kept', async () => {
    const owner = await owned();
    const admin = await addMember(t, owner.id, 'admin');
    const [nodeId] = await createNodes(t, owner, [{ name: 'already gone' }]);
    expect((await t.call('/api/nodes', { method: 'DELETE', token: owner.token, body: { destroyNodeId: nodeId } })).status).toBe(200);
    await expect.poll(() => statusOf(nodeId), { timeout: 30_000 }).toBe('DESTROYED');
    // An offer pending, an invitation and a session: all of it goes.
    expect((await t.call('/api/account/transfer', { method: 'POST', token: owner.token, body: { userId: admin.id } })).status).toBe(201);
    expect((await t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email: `later-${owner.id}@example.com`, role: 'viewer' } })).status).toBe(201);
    const r = await del(owner, { password: PASSWORD });
    expect(r.status, r.text).toBe(204);
    expect((await t.call('/api/nodes', { token: admin.token })).status).toBe(401);
    const after = await rowsOf(owner.id);
    expect(after).toMatchObject({ accounts: 0, members: 0 });
    expect(after.usage).toBeGreaterThan(0);
    expect(await count('SELECT count(*)::int AS n FROM users WHERE id = $1', admin.id)).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM account_invitations WHERE account_id = $1', owner.id)).toBe(0);
    await expect.poll(async () => (await rowsOf(owner.id)).audit).toBeGreaterThan(0);
  });
});
