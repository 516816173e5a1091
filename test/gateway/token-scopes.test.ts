// Token scopes on the bearer gateway, through real sockets and a real devnode: a read-only token
// reads an unlocked node (RLN's read-only routes and the node's status document) but cannot
// unlock, lock, init, pay or back it up, and the node stays as it was; a token limited to nodes
// is refused its owner's other nodes (403) while another user's node stays 404 like a missing one;
// an api-only token is refused the gateway and a gateway-only token the management API.
import { gatewayError } from '../helpers/gateway-error.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { rawRequest, type RawResult } from './gateway-client.ts';

const PASSWORD = 'node-password-123';
const MISSING = 'f'.repeat(32);

describe(`token scopes on the bearer gateway on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeA: string;
  let nodeB: string;
  let bobsNode: string;

  const gateway = (token: string, path: string, opts: { method?: string; body?: string } = {}) =>
    rawRequest(t.config.nodeApiUrl, path, {
      method: opts.method,
      body: opts.body,
      headers: { authorization: `Bearer ${token}`, ...(opts.body ? { 'content-type': 'application/json' } : {}) },
    });
  const scoped = async (scope: { readOnly?: boolean; nodeIds?: string[]; access?: 'all' | 'api' | 'gateway' }, user = alice) =>
    (await t.server.services.accounts.createToken(user.email, 'scoped', undefined, scope)).token;
  const refusedForScope = (r: RawResult, what: string) => {
    expect(r.status, `${what}: ${r.text}`).toBe(403);
    expect(gatewayError(r).code, what).toBe('forbidden_scope');
  };

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t));
    [nodeA, nodeB] = await createNodes(t, alice, [{ name: 'a' }, { name: 'b' }]);
    [bobsNode] = await createNodes(t, bob, [{ name: 'bobs' }]);
    for (const route of ['init', 'unlock']) {
      const r = await gateway(alice.token, `/${alice.id}/${nodeA}/${route}`, { method: 'POST', body: JSON.stringify({ password: PASSWORD }) });
      expect(r.status, r.text).toBe(200);
    }
  });
  afterAll(() => t?.stop());

  describe('a read-only token', () => {
    let token: string;
    beforeAll(async () => {
      token = await scoped({ readOnly: true });
    });

    it("reads the node: its status document and RLN's read-only routes, answered by the node", async () => {
      const base = `/${alice.id}/${nodeA}`;
      expect((await gateway(token, base)).json).toMatchObject({ nodeId: nodeA, locked: false, initialized: true });
      expect((await gateway(token, `${base}/nodeinfo`)).json.pubkey).toMatch(/^[0-9a-f]{66}$/);
      for (const route of ['networkinfo', 'listchannels', 'listpeers']) expect((await gateway(token, `${base}/${route}`)).status, route).toBe(200);
      const balance = await gateway(token, `${base}/btcbalance`, { method: 'POST', body: JSON.stringify({ skip_sync: true }) });
      expect(balance.status, balance.text).toBe(200);
      // A route spelled with escapes is classified as what the node receives (route-path.ts).
      expect((await gateway(token, `${base}/%6Eodeinfo`)).status).toBe(200);
    });

    it('cannot call a route that changes the node, and the node stays unlocked', async () => {
      const base = `/${alice.id}/${nodeA}`;
      const password = JSON.stringify({ password: PASSWORD });
      const writes: Array<[string, string, string?]> = [
        ['POST', 'unlock', password],
        ['POST', 'lock', '{}'],
        ['POST', 'init', password],
        ['POST', 'changepassword', JSON.stringify({ old_password: PASSWORD, new_password: 'another-password' })],
        ['POST', 'backup', JSON.stringify({ backup_path: '/tmp/x', password: PASSWORD })],
        ['POST', 'restore', JSON.stringify({ backup_path: '/tmp/x', password: PASSWORD })],
        ['POST', 'shutdown', '{}'],
        ['POST', 'address', '{}'],
        ['POST', 'sendpayment', JSON.stringify({ invoice: 'lnbc1' })],
        ['POST', 'openchannel', '{}'],
        ['POST', 'signmessage', JSON.stringify({ message: 'hi' })],
        ['POST', '', '{}'],
        ['GET', 'nodeinfo/'],
        ['GET', 'NodeInfo'],
        ['GET', 'some-future-route'],
      ];
      for (const [method, route, body] of writes) refusedForScope(await gateway(token, `${base}/${route}`, { method, body }), `${method} /${route}`);
      const node = (await t.call(`/api/nodes/${nodeA}`, { token: alice.token })).json.data;
      expect(node).toMatchObject({ status: 'RUNNING', locked: false, initialized: true });
      expect((await gateway(alice.token, `${base}/nodeinfo`)).status).toBe(200);
    });

    it('is refused on a route that changes the node before the node is looked up: the same for any node', async () => {
      for (const path of [`/${alice.id}/${nodeA}/lock`, `/${bob.id}/${bobsNode}/lock`, `/${alice.id}/${MISSING}/lock`]) {
        refusedForScope(await gateway(token, path, { method: 'POST', body: '{}' }), path);
      }
    });
  });

  describe('a token limited to some nodes', () => {
    let token: string;
    beforeAll(async () => {
      token = await scoped({ nodeIds: [nodeA] });
    });

    it('reaches its node, also to change it', async () => {
      expect((await gateway(token, `/${alice.id}/${nodeA}/nodeinfo`)).status).toBe(200);
      expect((await gateway(token, `/${alice.id}/${nodeA}/address`, { method: 'POST', body: '{}' })).json.address).toEqual(expect.any(String));
    });

    it("is refused its owner's other node with 403, whatever the route", async () => {
      for (const route of ['', 'nodeinfo', 'unlock']) {
        refusedForScope(await gateway(token, `/${alice.id}/${nodeB}/${route}`, { method: route === 'unlock' ? 'POST' : 'GET', body: route === 'unlock' ? '{}' : undefined }), route);
      }
    });

    it("answers another user's node exactly like a missing one (404)", async () => {
      const comparable = (r: RawResult, id: string) => ({ status: r.status, error: { ...gatewayError(r), requestId: '', message: gatewayError(r).message.replaceAll(id, 'X') } });
      for (const owner of [bob.id, alice.id]) {
        const foreign = await gateway(token, `/${owner}/${bobsNode}/nodeinfo`);
        const missing = await gateway(token, `/${owner}/${MISSING}/nodeinfo`);
        expect(foreign.status).toBe(404);
        expect(gatewayError(foreign).code).toBe('node_not_found');
        expect(comparable(foreign, bobsNode)).toEqual(comparable(missing, MISSING));
      }
      // Bob's own token limited to his node, on alice's node: 404 too.
      const bobs = await scoped({ nodeIds: [bobsNode] }, bob);
      expect(gatewayError(await gateway(bobs, `/${alice.id}/${nodeA}/nodeinfo`)).code).toBe('node_not_found');
    });
  });

  it('an api-only token is refused on the gateway, even for the status document; it works on the API', async () => {
    const token = await scoped({ access: 'api' });
    for (const route of ['', 'nodeinfo']) refusedForScope(await gateway(token, `/${alice.id}/${nodeA}/${route}`), `GET /${route}`);
    expect((await t.call(`/api/nodes/${nodeA}`, { token })).status).toBe(200);
  });

  it('a gateway-only token reaches the node and is refused on the management API', async () => {
    const token = await scoped({ access: 'gateway' });
    expect((await gateway(token, `/${alice.id}/${nodeA}/nodeinfo`)).status).toBe(200);
    const api = await t.call('/api/nodes', { token });
    expect(api.status).toBe(403);
    expect(api.json.error).toMatchObject({ code: 'forbidden_scope', message: expect.stringContaining('gateway') });
  });

  it('a revoked scoped token is 401 on the gateway from its next request', async () => {
    const { id, token } = await t.server.services.accounts.createToken(alice.email, 'soon-revoked', undefined, { readOnly: true });
    expect((await gateway(token, `/${alice.id}/${nodeA}/nodeinfo`)).status).toBe(200);
    await t.server.services.accounts.revokeToken(id);
    expect((await gateway(token, `/${alice.id}/${nodeA}/nodeinfo`)).status).toBe(401);
  });
});
