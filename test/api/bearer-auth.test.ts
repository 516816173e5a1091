// The security cases every route of the management API shares, over one table of its bearer
// routes (bearer-routes.ts): no token, a malformed, unknown or revoked token; for every route
// about one node, another user's attempt, which must change nothing; and the token scopes. The
// table is checked against the routes the server really registers, so a new route cannot ship
// without these checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { itEnforcesTokenScopes, itHidesAnotherUsersNode, itMetersOnlyRealNodes, itRequiresBearerAuth, type ScopedTokens } from '../helpers/security.ts';
import { createNodes, createTenants, type Tenants } from '../helpers/tenants.ts';
import { registeredRoutes } from '../helpers/registered-routes.ts';
import { BEARER_ROUTES, PUBLIC_PREFIX, PUBLIC_ROUTES } from './bearer-routes.ts';
import { classifyApiRoute } from '../../src/api/route-scope.ts';

describe(`bearer authentication of every management route on ${databaseLabel()}`, () => {
  let t: TestServer;
  let users: Tenants;
  let nodeId: string;
  let tokens: ScopedTokens;
  let bobsLimitedToken: string;
  let alicesNodes: string[];
  let bobsNodeId: string;

  beforeAll(async () => {
    t = await startTestServer();
    users = await createTenants(t);
    const [guarded, other] = await createNodes(t, users.alice, [{ name: 'guarded' }, { name: 'other' }]);
    const [bobsNode] = await createNodes(t, users.bob, [{ name: 'bobs' }]);
    nodeId = guarded;
    alicesNodes = [guarded, other];
    bobsNodeId = bobsNode;
    const token = async (email: string, scope: Parameters<TestServer['server']['services']['accounts']['createToken']>[3]) =>
      (await t.server.services.accounts.createToken(email, 'scoped', undefined, scope)).token;
    tokens = {
      readOnly: await token(users.alice.email, { readOnly: true }),
      thisNode: await token(users.alice.email, { nodeIds: [guarded] }),
      otherNode: await token(users.alice.email, { nodeIds: [other] }),
      gatewayOnly: await token(users.alice.email, { access: 'gateway' }),
      apiOnly: await token(users.alice.email, { access: 'api' }),
    };
    bobsLimitedToken = await token(users.bob.email, { nodeIds: [bobsNode] });
  });
  afterAll(() => t?.stop());

  it('the table names every route the server registers behind a token, and only those', () => {
    const registered = registeredRoutes(t.server.api);
    const isPublic = (r: string) => r in PUBLIC_ROUTES || r.startsWith(PUBLIC_PREFIX);
    const tabled = BEARER_ROUTES.map((r) => r.name);
    expect(registered.filter((r) => !isPublic(r) && !tabled.includes(r)), 'routes with neither bearer tests nor a reason to be public').toEqual([]);
    expect(tabled.filter((r) => !registered.includes(r)), 'table entries the server does not register').toEqual([]);
    expect(Object.keys(PUBLIC_ROUTES).filter((r) => !registered.includes(r)), 'public entries the server does not register').toEqual([]);
  });

  it("the table's credential routes are exactly those the scope checks refuse to every scoped token", () => {
    for (const route of BEARER_ROUTES) {
      const [method, url] = route.name.split(' ');
      expect(classifyApiRoute(method!, url).managesCredentials, route.name).toBe(route.credential === true);
    }
  });

  for (const route of BEARER_ROUTES) itRequiresBearerAuth(() => ({ t, revoked: users.revoked, nodeId }), route);

  it('takes the token bare (`Authorization: <token>`, as clients of the original send it) or with the Bearer scheme in any case', async () => {
    const token = users.alice.token;
    for (const authorization of [token, ` ${token} `, `Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`]) {
      const r = await t.call(`/api/nodes/${nodeId}`, { headers: { authorization } });
      expect(r.status, authorization.replace(token, '<token>')).toBe(200);
      expect(r.json.data.nodeId).toBe(nodeId);
    }
    // The bare form is a credential like the other: another user's bare token still sees nothing of alice's.
    expect((await t.call(`/api/nodes/${nodeId}`, { headers: { authorization: users.bob.token } })).status).toBe(404);
  });

  describe("another user's attempts, and alice's scoped tokens, on alice's node", () => {
    const aliceView = async () => {
      const node = (await t.call(`/api/nodes/${nodeId}`, { token: users.alice.token })).json.data;
      const certs = (await t.call(`/api/nodes/${nodeId}/certs`, { token: users.alice.token })).json.certificates;
      const deliveries = (await t.call(`/api/nodes/${nodeId}/webhooks/deliveries`, { token: users.alice.token })).json.data;
      return { node, certs, deliveries };
    };
    let before: Awaited<ReturnType<typeof aliceView>>;
    beforeAll(async () => {
      before = await aliceView();
    });

    for (const route of BEARER_ROUTES.filter((r) => r.nodeScoped)) {
      itHidesAnotherUsersNode(() => ({ t, other: users.bob, nodeId }), route);
      // A token limited to nodes says 403 only about its owner's nodes, never about another user's
      // (a credential route refuses it whatever node is named, before looking: nothing to learn).
      if (!route.credential) itHidesAnotherUsersNode(() => ({ t, other: { token: bobsLimitedToken }, nodeId }), route, "alice's node with a token bob limited to his own node");
    }
    for (const route of BEARER_ROUTES) itEnforcesTokenScopes(() => ({ t, tokens, nodeId }), route);

    // Every route with a node in its path counts against the monthly API calls under that node.
    for (const route of BEARER_ROUTES.filter((r) => r.name.includes(' /api/nodes/:id'))) {
      itMetersOnlyRealNodes(() => ({ t, token: users.alice.token, accountId: users.alice.id, ownNodes: alicesNodes, foreignNode: bobsNodeId }), route);
    }

    it('leave the node, its certificates and its webhook deliveries as they were', async () => {
      const after = await aliceView();
      expect(after.node.status).toBe('RUNNING');
      expect(after).toEqual(before);
    });
  });
});
