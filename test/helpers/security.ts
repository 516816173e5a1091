// The security checks every bearer-authenticated route shares: no token, a malformed token, a
// revoked token. (Another user's resources are checked per route, where it has resources.)
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
