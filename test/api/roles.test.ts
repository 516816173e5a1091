// Roles against every route: each route's least role (route-roles-table.ts) is checked against the
// routes the server registers, against the service's rule, and by calling it as a member of each
// role: the role just below the least is refused (403 forbidden_role, and nothing changes), the
// least role gets past the check (the route's own answer, here about a node that does not exist).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { registeredRoutes } from '../helpers/registered-routes.ts';
import { addMember } from '../helpers/members.ts';
import { BEARER_ROUTES } from './bearer-routes.ts';
import { ROUTE_LEAST_ROLES } from './route-roles-table.ts';
import { leastRoleOf } from '../../src/api/route-roles.ts';
import { ROLES, roleRank, type Role } from '../../src/domain/roles.ts';

const MISSING_NODE = 'f'.repeat(32);

describe(`each management route's least role on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let nodeId: string;
  const members = {} as Record<Role, TestUser>;

  beforeAll(async () => {
    t = await startTestServer();
    owner = await t.createUser('scale');
    [nodeId] = await createNodes(t, owner, [{ name: 'shared' }]);
    members.owner = owner;
    for (const role of ['admin', 'developer', 'viewer'] as const) members[role] = await addMember(t, owner.id, role);
  });
  afterAll(() => t?.stop());

  it('the table names every bearer route, and the service classifies each as the table does', () => {
    const bearer = BEARER_ROUTES.map((r) => r.name).sort();
    expect(Object.keys(ROUTE_LEAST_ROLES).sort()).toEqual(bearer);
    const registered = registeredRoutes(t.server.api);
    for (const name of bearer) expect(registered, name).toContain(name);
    for (const [name, least] of Object.entries(ROUTE_LEAST_ROLES)) {
      const [method, url] = name.split(' ');
      expect(leastRoleOf(method!, url), name).toBe(least);
    }
  });

  for (const route of BEARER_ROUTES) {
    const least = ROUTE_LEAST_ROLES[route.name] ?? 'owner';
    const below = ROLES[roleRank(least) - 1];
    if (below) {
      it(`${route.name}: a ${below} is refused (least role ${least}), and the node is unchanged`, async () => {
        const before = (await t.call(`/api/nodes/${nodeId}`, { token: owner.token })).json.data;
        const r = await t.call(route.path(nodeId), { method: route.method, body: route.body?.(nodeId), token: members[below].token });
        expect(r.status, r.text).toBe(403);
        expect(r.json.error.code).toBe('forbidden_role');
        expect(r.json.error.message).toContain(`needs ${least}`);
        const after = (await t.call(`/api/nodes/${nodeId}`, { token: owner.token })).json.data;
        expect({ ...after, updatedAt: undefined }).toEqual({ ...before, updatedAt: undefined });
      });
    }
    // The stream would stay open: its role check is the same hook, before the route's handler.
    if (!route.streams) {
      it(`${route.name}: a ${least} gets past the role check`, async () => {
        const r = await t.call(route.path(MISSING_NODE), { method: route.method, body: route.body?.(MISSING_NODE), token: members[least].token });
        expect(r.json?.error?.code, r.text).not.toBe('forbidden_role');
      });
    }
  }

  it("a member works with the account's nodes at the same URLs as its owner", async () => {
    const seen = await t.call(`/api/nodes/${nodeId}`, { token: members.viewer.token });
    expect(seen.status).toBe(200);
    expect(seen.json.data.nodeId).toBe(nodeId);
    const listed = await t.call('/api/nodes', { token: members.developer.token });
    expect(listed.json.nodes.map((n: { nodeId: string }) => n.nodeId)).toContain(nodeId);
  });
});
