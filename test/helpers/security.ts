// The security checks every bearer-authenticated route shares: no token, a malformed token, a
// revoked token; and for routes about one node, another user's attempt.
import { expect, it } from 'vitest';
import type { CallOptions, TestServer, TestUser } from './server.ts';

export interface RouteUnderTest {
  name: string;
  path: (nodeId: string) => string;
  method: string;
  body?: (nodeId: string) => unknown;
}

export function itRequiresBearerAuth(ctx: () => { t: TestServer; revoked: TestUser; nodeId: string }, route: RouteUnderTest) {
  const call = (opts: CallOptions) => {
    const { t, nodeId } = ctx();
    return t.call(route.path(nodeId), { method: route.method, body: route.body?.(nodeId), ...opts });
  };
  it(`${route.name}: no token -> 401`, async () => {
    const r = await call({});
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });
  it(`${route.name}: malformed or unknown token -> 401`, async () => {
    for (const token of ['nope', `rlnc_${'A'.repeat(43)}`]) {
      const r = await call({ token });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
    }
  });
  it(`${route.name}: revoked token -> 401`, async () => {
    const r = await call({ token: ctx().revoked.token });
    expect(r.status).toBe(401);
  });
}

const MISSING_NODE = 'f'.repeat(32);

/**
 * Another user naming the node answers exactly like a node that does not exist (404
 * node_not_found, the same body but for the id and request id), so nobody learns which ids exist.
 */
export function itHidesAnotherUsersNode(ctx: () => { t: TestServer; other: TestUser; nodeId: string }, route: RouteUnderTest) {
  it(`${route.name}: another user's node -> 404 like a missing node`, async () => {
    const { t, other, nodeId } = ctx();
    const call = (id: string) => t.call(route.path(id), { method: route.method, body: route.body?.(id), token: other.token });
    const [foreign, missing] = [await call(nodeId), await call(MISSING_NODE)];
    expect(foreign.status, foreign.text).toBe(404);
    expect(foreign.json.error.code).toBe('node_not_found');
    const comparable = (error: any, id: string) => ({ ...error, requestId: '', message: error.message.replaceAll(id, 'X') });
    expect(comparable(foreign.json.error, nodeId)).toEqual(comparable(missing.json.error, MISSING_NODE));
  });
}
