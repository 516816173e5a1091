// The security cases every route of the management API shares, over one table of its bearer
// routes (bearer-routes.ts): no token, a malformed, unknown or revoked token; and for every route
// about one node, another user's attempt, which must change nothing. The table is checked against
// the routes the server really registers, so a new route cannot ship without these checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { itHidesAnotherUsersNode, itRequiresBearerAuth } from '../helpers/security.ts';
import { createNodes, createTenants, type Tenants } from '../helpers/tenants.ts';
import { registeredRoutes } from '../helpers/registered-routes.ts';
import { BEARER_ROUTES, PUBLIC_PREFIX, PUBLIC_ROUTES } from './bearer-routes.ts';

describe(`bearer authentication of every management route on ${databaseLabel()}`, () => {
  let t: TestServer;
  let users: Tenants;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer();
    users = await createTenants(t);
    [nodeId] = await createNodes(t, users.alice, [{ name: 'guarded' }]);
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

  for (const route of BEARER_ROUTES) itRequiresBearerAuth(() => ({ t, revoked: users.revoked, nodeId }), route);

  describe("another user's attempts on alice's node", () => {
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

    for (const route of BEARER_ROUTES.filter((r) => r.nodeScoped)) itHidesAnotherUsersNode(() => ({ t, other: users.bob, nodeId }), route);

    it('leave the node, its certificates and its webhook deliveries as they were', async () => {
      const after = await aliceView();
      expect(after.node.status).toBe('RUNNING');
      expect(after).toEqual(before);
    });
  });
});
