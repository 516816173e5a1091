// A spent monthly quota never locks an account's owners and admins out (issue #36): the routes of
// src/api/quota-routes.ts answer them as usual (counted all the same), while every other route, and
// those routes for developers and viewers, answer 429 quota_exceeded. And the web UI's own reads of
// the service's records are not metered, while a script holding the session cookie is metered and
// rate limited like a token for everything else. Over real HTTP, on PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type CallResult, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';
import { registeredRoutes } from '../helpers/registered-routes.ts';
import { tlsRequest, type ClientCredentials } from '../gateway/gateway-client.ts';
import { QUOTA_EXEMPT_ROUTES, UI_READ_HEADER } from '../../src/api/quota-routes.ts';

const QUOTA = 12;
const PASSWORD = 'correct horse battery';
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ USAGE_FLUSH_BATCH: '2', USAGE_FLUSH_INTERVAL_MS: '200' });
  await t.server.db.query(`INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users) VALUES ('tiny', 1, $1, 10)`, [QUOTA]);
}, 60_000);
afterAll(() => t?.stop());

/** Calls GET /api/nodes with `headers` until the quota refuses one; the refusal. */
async function spendQuota(headers: Record<string, string>): Promise<CallResult> {
  for (let i = 0; i < QUOTA * 3; i++) {
    const r = await t.call('/api/nodes', { headers });
    if (r.status === 429) return r;
  }
  throw new Error('the quota never refused a call');
}

const refusedByQuota = (r: CallResult) => r.status === 429 && r.json?.error?.code === 'quota_exceeded';

/** The account's written API calls of the month, after the meter wrote what it holds. */
async function writtenCalls(accountId: string): Promise<number> {
  expect(await t.server.services.meter.flush()).toBe(true);
  const rows = await t.server.db.query<{ calls: string | number }>('SELECT calls FROM api_call_totals WHERE account_id = $1', [accountId]);
  return rows.reduce((sum, r) => sum + Number(r.calls), 0);
}

describe(`a spent monthly quota (${databaseLabel()})`, () => {
  let owner: TestUser;
  let admin: TestUser;
  let developer: TestUser;
  let viewer: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    owner = await t.createUser('tiny');
    [nodeId] = await createNodes(t, owner, [{ name: 'quota-exempt' }]);
    admin = await addMember(t, owner.id, 'admin');
    developer = await addMember(t, owner.id, 'developer');
    viewer = await addMember(t, owner.id, 'viewer');
    expect(refusedByQuota(await spendQuota({ authorization: `Bearer ${owner.token}` }))).toBe(true);
  }, 120_000);

  it('names only routes the server registers', () => {
    const registered = registeredRoutes(t.server.api);
    expect([...QUOTA_EXEMPT_ROUTES].filter((r) => !registered.includes(r))).toEqual([]);
  });

  it('still refuses the owner every other route, and developers and viewers every route', async () => {
    expect(refusedByQuota(await t.call('/api/nodes', { token: owner.token }))).toBe(true);
    expect(refusedByQuota(await t.call(`/api/nodes/${nodeId}/start`, { method: 'POST', token: owner.token }))).toBe(true);
    expect(refusedByQuota(await t.call(`/api/nodes/${nodeId}/backups`, { token: admin.token }))).toBe(true);
    for (const member of [developer, viewer]) {
      expect(refusedByQuota(await t.call('/api/account', { token: member.token }))).toBe(true);
      expect(refusedByQuota(await t.call('/api/usage', { token: member.token }))).toBe(true);
    }
    expect(refusedByQuota(await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: developer.token }))).toBe(true);
  });

  it('lets the owner and admins read the account and usage, manage members, invitations, tokens and certificates, and stop and destroy nodes; each call is counted', async () => {
    const before = await writtenCalls(owner.id);
    const answers: Record<string, CallResult> = {};
    const call = async (name: string, path: string, who: TestUser, method = 'GET', body?: unknown) => {
      const r = await t.call(path, { method, body, token: who.token });
      expect(refusedByQuota(r), `${name}: ${r.text}`).toBe(false);
      expect(r.status, `${name}: ${r.text}`).toBeLessThan(500);
      answers[name] = r;
      return r;
    };
    for (const who of [owner, admin]) {
      await call('GET /api/account', '/api/account', who);
      const usage = await call('GET /api/usage', '/api/usage', who);
      expect(usage.status).toBe(200);
      await call('GET /api/account/members', '/api/account/members', who);
      await call('GET /api/account/invitations', '/api/account/invitations', who);
      await call('GET /api/tokens', '/api/tokens', who);
      await call('GET /api/nodes/:id/certs', `/api/nodes/${nodeId}/certs`, who);
    }
    expect((await call('PATCH /api/account/members/:userId', `/api/account/members/${viewer.id}`, admin, 'PATCH', { role: 'developer' })).status).toBe(200);
    const invited = await call('POST /api/account/invitations', '/api/account/invitations', admin, 'POST', { email: `late-${Date.now()}@example.com`, role: 'viewer' });
    expect(invited.status).toBe(201);
    expect((await call('DELETE /api/account/invitations/:id', `/api/account/invitations/${invited.json.id}`, owner, 'DELETE')).status).toBeLessThan(300);
    const token = await call('POST /api/tokens', '/api/tokens', owner, 'POST', { name: 'after the quota' });
    expect(token.status).toBe(200);
    expect((await call('DELETE /api/tokens/:id', `/api/tokens/${token.json.data.id}`, owner, 'DELETE')).status).toBeLessThan(300);
    expect((await call('PUT /api/account/members/:userId/monthly-api-calls', `/api/account/members/${viewer.id}/monthly-api-calls`, admin, 'PUT', { monthlyApiCalls: 0 })).status).toBe(200);
    expect((await call('PUT /api/tokens/:id/monthly-api-calls', `/api/tokens/${admin.tokenId}/monthly-api-calls`, owner, 'PUT', { monthlyApiCalls: null })).status).toBe(200);
    // No such certificate: answered (404), not refused.
    await call('DELETE /api/nodes/:id/certs/:serial', `/api/nodes/${nodeId}/certs/${'0'.repeat(16)}`, admin, 'DELETE');
    expect((await call('DELETE /api/account/members/:userId', `/api/account/members/${developer.id}`, admin, 'DELETE')).status).toBeLessThan(300);
    expect((await call('POST /api/nodes/:id/stop', `/api/nodes/${nodeId}/stop`, owner, 'POST')).status).toBeLessThan(300);
    // Read from the database: GET /api/nodes/:id is covered by the spent quota.
    for (let i = 0; i < 300; i++) {
      const [row] = await t.server.db.query<{ status: string }>('SELECT status FROM nodes WHERE id = $1', [nodeId]);
      if (row?.status === 'STOPPED') break;
      await new Promise((done) => setTimeout(done, 100));
    }
    expect((await call('DELETE /api/nodes', '/api/nodes', owner, 'DELETE', { destroyNodeId: nodeId })).status).toBeLessThan(300);
    // Every route of the table was called.
    expect(Object.keys(answers).sort()).toEqual([...QUOTA_EXEMPT_ROUTES].sort());
    // Counted, never refused: the month's total grew by every call above.
    expect(await writtenCalls(owner.id)).toBe(before + 12 + 11);
  });
});

describe(`caps on a member's or a token's monthly calls (${databaseLabel()})`, () => {
  /** Calls GET /api/nodes with `token` until refused; how many were admitted, and the refusal. */
  async function admittedUntilRefused(token: string) {
    for (let admitted = 0; admitted < 50; admitted++) {
      const r = await t.call('/api/nodes', { token });
      if (r.status === 429) return { admitted, refusal: r };
      expect(r.status).toBe(200);
    }
    throw new Error('never refused');
  }

  it('refuses a capped member (every token of theirs) and a capped token with 429 quota_exceeded, within the bound, and no one else', async () => {
    const owner = await t.createUser();
    const developer = await addMember(t, owner.id, 'developer');
    const admin = await addMember(t, owner.id, 'admin');
    const put = (path: string, who: TestUser, monthlyApiCalls: unknown) => t.call(path, { method: 'PUT', token: who.token, body: { monthlyApiCalls } });
    const capped = await put(`/api/account/members/${developer.id}/monthly-api-calls`, admin, 5);
    expect(capped.status, capped.text).toBe(200);
    expect(capped.json).toEqual({ userId: developer.id, monthlyApiCalls: 5 });
    const { admitted, refusal } = await admittedUntilRefused(developer.token);
    // One replica, batch 2: at most cap + 2 - 1 (docs/USAGE.md).
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted).toBeLessThanOrEqual(6);
    expect(refusal.json.error).toMatchObject({ code: 'quota_exceeded', details: { cap: 'member' } });
    expect(refusal.headers.get('retry-after')).toBeTruthy();
    // Usage shows the member's calls beside the cap.
    const usage = await t.call('/api/usage', { token: owner.token });
    expect(usage.json.members.find((m: { userId: string }) => m.userId === developer.id)).toMatchObject({ calls: admitted, monthlyApiCalls: 5 });
    const another = await t.server.services.accounts.createToken(developer.email, 'another');
    expect(refusedByQuota(await t.call('/api/nodes', { token: another.token }))).toBe(true);
    // The account and its other members are not held back.
    expect((await t.call('/api/nodes', { token: owner.token })).status).toBe(200);
    expect((await t.call('/api/nodes', { token: admin.token })).status).toBe(200);

    // A token's cap holds that token alone.
    const second = await t.server.services.accounts.createToken(owner.email, 'second');
    expect((await put(`/api/tokens/${second.id}/monthly-api-calls`, owner, 3)).status).toBe(200);
    const byToken = await admittedUntilRefused(second.token);
    expect(byToken.admitted).toBeGreaterThanOrEqual(3);
    expect(byToken.admitted).toBeLessThanOrEqual(4);
    expect(byToken.refusal.json.error.details.cap).toBe('token');
    expect((await t.call('/api/nodes', { token: owner.token })).status).toBe(200);

    // Lifting the cap admits the member again within a batch.
    expect((await put(`/api/account/members/${developer.id}/monthly-api-calls`, owner, null)).status).toBe(200);
    let again = await t.call('/api/nodes', { token: developer.token });
    for (let i = 0; i < 50 && again.status === 429; i++) {
      await new Promise((done) => setTimeout(done, 100));
      again = await t.call('/api/nodes', { token: developer.token });
    }
    expect(again.status).toBe(200);
  });

  it("holds a capped member's client certificates too: the mutual-TLS gateway counts a certificate's calls as its issuer's", async () => {
    const owner = await t.createUser();
    const [nodeId] = await createNodes(t, owner, [{ name: 'capped-cert' }]);
    const developer = await addMember(t, owner.id, 'developer');
    // Capped before the member's first call, which reads the cap (a later change applies from a batch on).
    const put = await t.call(`/api/account/members/${developer.id}/monthly-api-calls`, { method: 'PUT', token: owner.token, body: { monthlyApiCalls: 3 } });
    expect(put.status, put.text).toBe(200);
    const issued = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: developer.token });
    expect(issued.status, issued.text).toBe(200);
    const creds = issued.json as ClientCredentials;
    const viaCertificate = () => tlsRequest(t.config.userNodeUrl, `/nodes/${owner.id}/${nodeId}/nodeinfo`, { ...creds, ca: creds.certificateChain });
    let admitted = 0;
    let refusal: Awaited<ReturnType<typeof viaCertificate>> | undefined;
    // The generate-cert call above was the member's first of the month.
    for (let i = 0; i < 20 && !refusal; i++) {
      const r = await viaCertificate();
      if (r.status === 429) refusal = r;
      else admitted++;
    }
    expect(refusal, 'the certificate was never refused').toBeDefined();
    expect(refusal!.json.rln_cloud).toMatchObject({ code: 'quota_exceeded', details: { cap: 'member' } });
    // cap + B - 1 with one replica, less the member's management call.
    expect(admitted).toBeGreaterThanOrEqual(2);
    expect(admitted).toBeLessThanOrEqual(3);
    // The owner's own calls through the gateway are not held back.
    expect((await t.call(`/api/nodes/${nodeId}`, { token: owner.token })).status).toBe(200);
  });

  it('is an owner\'s or admin\'s, for the account\'s own members and tokens, with a valid cap', async () => {
    const owner = await t.createUser();
    const developer = await addMember(t, owner.id, 'developer');
    const stranger = await t.createUser();
    const put = (path: string, who: TestUser, monthlyApiCalls: unknown) => t.call(path, { method: 'PUT', token: who.token, body: { monthlyApiCalls } });
    const byDeveloper = await put(`/api/tokens/${developer.tokenId}/monthly-api-calls`, developer, null);
    expect(byDeveloper.status).toBe(403);
    expect(byDeveloper.json.error.code).toBe('forbidden_role');
    expect((await put(`/api/account/members/${developer.id}/monthly-api-calls`, developer, null)).json.error.code).toBe('forbidden_role');
    const foreignMember = await put(`/api/account/members/${stranger.id}/monthly-api-calls`, owner, 1);
    expect([foreignMember.status, foreignMember.json.error.code]).toEqual([404, 'member_not_found']);
    const foreignToken = await put(`/api/tokens/${stranger.tokenId}/monthly-api-calls`, owner, 1);
    expect([foreignToken.status, foreignToken.json.error.code]).toEqual([404, 'token_not_found']);
    for (const bad of [-1, 1.5, '10', 1e13]) {
      const r = await put(`/api/account/members/${developer.id}/monthly-api-calls`, owner, bad);
      expect([r.status, r.json.error.code], String(bad)).toEqual([400, 'invalid_request']);
    }
    // The stranger's calls are not capped by any of this.
    expect((await t.call('/api/nodes', { token: stranger.token })).status).toBe(200);
  });
});

describe(`the web UI's own reads (${databaseLabel()})`, () => {
  let dave: TestUser;
  let session: Record<string, string>;
  let csrf: string;

  beforeAll(async () => {
    dave = await t.createUser('tiny');
    await t.server.services.accounts.setPassword(dave.email, PASSWORD);
    const r = await t.call('/api/session', { method: 'POST', body: { email: dave.email, password: PASSWORD } });
    session = { cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]! };
    csrf = r.json.csrfToken;
  });

  it('are not counted; a session without the UI header, a token with it, a read reaching a node and a change are', async () => {
    const ui = { ...session, [UI_READ_HEADER]: 'read' };
    const start = await writtenCalls(dave.id);
    for (let i = 0; i < QUOTA * 2; i++) expect((await t.call('/api/nodes', { headers: ui })).status).toBe(200);
    expect((await t.call('/api/usage', { headers: ui })).status).toBe(200);
    expect((await t.call('/api/tokens', { headers: ui })).status).toBe(200);
    expect((await t.call('/api/nodes/latest-rln-image', { headers: ui })).status).toBe(200);
    expect(await writtenCalls(dave.id)).toBe(start);
    // A script with the cookie but not the header.
    expect((await t.call('/api/nodes', { headers: session })).status).toBe(200);
    // A token with the header: the header means nothing without the session.
    expect((await t.call('/api/nodes', { token: dave.token, headers: { [UI_READ_HEADER]: 'read' } })).status).toBe(200);
    // A read that asks a node's daemon (here one that does not exist: counted under no node).
    expect((await t.call(`/api/nodes/${'f'.repeat(32)}/health`, { headers: ui })).status).toBe(404);
    // A change, whatever the headers.
    const created = await t.call('/api/tokens', { method: 'POST', body: { name: 'ui' }, headers: { ...ui, 'x-csrf-token': csrf } });
    expect(created.status).toBe(200);
    expect(await writtenCalls(dave.id)).toBe(start + 4);
  });

  it('still answer with the quota spent, while the same session without the header is refused', async () => {
    expect(refusedByQuota(await spendQuota(session))).toBe(true);
    const byToken = await t.call('/api/nodes', { token: dave.token });
    expect(refusedByQuota(byToken), `${byToken.status} ${byToken.text}`).toBe(true);
    const ui = { ...session, [UI_READ_HEADER]: 'read' };
    expect((await t.call('/api/nodes', { headers: ui })).status).toBe(200);
    expect((await t.call('/api/nodes/latest-rln-image', { headers: ui })).status).toBe(200);
    // Only reads: a change from the UI is covered by the quota like any other.
    const start = await t.call(`/api/nodes/${'f'.repeat(32)}/start`, { method: 'POST', headers: { ...ui, 'x-csrf-token': csrf } });
    expect(refusedByQuota(start)).toBe(true);
  });
});

describe(`a script holding a session cookie (${databaseLabel()})`, () => {
  let limited: TestServer;
  afterAll(() => limited?.stop());

  it('takes the per-token rate limit, like a token', async () => {
    limited = await startTestServer({ API_RATE_LIMIT_PER_MINUTE: '3', API_USER_RATE_LIMIT_PER_MINUTE: '100' });
    const erin = await limited.createUser();
    await limited.server.services.accounts.setPassword(erin.email, PASSWORD);
    const r = await limited.call('/api/session', { method: 'POST', body: { email: erin.email, password: PASSWORD } });
    const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await limited.call('/api/nodes', { headers: { cookie } })).status);
    expect(answers).toEqual([200, 200, 200, 429]);
  });
});
