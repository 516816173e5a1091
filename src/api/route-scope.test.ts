import { describe, expect, it } from 'vitest';
import { UNSCOPED, type TokenScope } from '../accounts/token-scope.ts';
import { classifyApiRoute, routeRefusal } from './route-scope.ts';

const scope = (s: Partial<TokenScope>): TokenScope => ({ ...UNSCOPED, ...s });
const NODE = 'a'.repeat(32);

describe('classifyApiRoute', () => {
  it('reads with GET and HEAD, writes with every other method', () => {
    expect(classifyApiRoute('GET', '/api/nodes').write).toBe(false);
    expect(classifyApiRoute('HEAD', '/api/nodes/:id').write).toBe(false);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(classifyApiRoute(method, '/api/nodes/:id/settings').write).toBe(true);
  });

  it('finds the node of a route in its :id parameter, or in the body of DELETE /api/nodes', () => {
    expect(classifyApiRoute('GET', '/api/nodes/:id').node).toBe('param');
    expect(classifyApiRoute('POST', '/api/nodes/:id/start').node).toBe('param');
    expect(classifyApiRoute('DELETE', '/api/nodes/:id/certs/:serial').node).toBe('param');
    expect(classifyApiRoute('DELETE', '/api/nodes').node).toBe('body');
    for (const [method, url] of [['GET', '/api/nodes'], ['POST', '/api/nodes'], ['GET', '/api/nodes/latest-rln-image'], ['POST', '/api/backups/uploads'], ['GET', '/api/tokens']]) {
      expect(classifyApiRoute(method!, url).node, `${method} ${url}`).toBeUndefined();
    }
    expect(classifyApiRoute('GET', '/api/nodes/:idx').node).toBeUndefined();
  });

  it('knows the routes that create and revoke tokens', () => {
    expect(classifyApiRoute('POST', '/api/tokens').managesCredentials).toBe(true);
    expect(classifyApiRoute('DELETE', '/api/tokens/:id').managesCredentials).toBe(true);
    expect(classifyApiRoute('GET', '/api/tokens').managesCredentials).toBe(false);
    // Client certificates are credentials too: one opens the mutual-TLS gateway.
    expect(classifyApiRoute('POST', '/api/nodes/:id/generate-cert').managesCredentials).toBe(true);
    expect(classifyApiRoute('DELETE', '/api/nodes/:id/certs/:serial').managesCredentials).toBe(true);
    expect(classifyApiRoute('GET', '/api/nodes/:id/certs').managesCredentials).toBe(false);
  });

  it('classifies a request that matched no route as a read or a write about no node', () => {
    expect(classifyApiRoute('POST', undefined)).toEqual({ write: true, node: undefined, managesCredentials: false, accountWide: false });
  });
});

describe('routeRefusal', () => {
  it('lets an unscoped token call everything', () => {
    for (const [method, url] of [['POST', '/api/nodes'], ['DELETE', '/api/nodes'], ['POST', '/api/tokens'], ['POST', '/api/nodes/:id/unlock']]) {
      expect(routeRefusal(UNSCOPED, classifyApiRoute(method!, url))).toBeUndefined();
    }
  });

  it('refuses every write to a read-only token', () => {
    expect(routeRefusal(scope({ readOnly: true }), classifyApiRoute('POST', '/api/nodes/:id/stop'))).toMatch(/read-only/);
    expect(routeRefusal(scope({ readOnly: true }), classifyApiRoute('GET', '/api/nodes/:id'))).toBeUndefined();
  });

  it('refuses a token limited to nodes the writes that are about no node, but not the reads', () => {
    const limited = scope({ nodeIds: [NODE] });
    expect(routeRefusal(limited, classifyApiRoute('POST', '/api/nodes'))).toMatch(/limited to some nodes/);
    expect(routeRefusal(limited, classifyApiRoute('POST', '/api/backups/uploads'))).toMatch(/limited to some nodes/);
    expect(routeRefusal(limited, classifyApiRoute('GET', '/api/nodes'))).toBeUndefined();
    // Decided once the node is known (bearer-auth.ts).
    expect(routeRefusal(limited, classifyApiRoute('POST', '/api/nodes/:id/stop'))).toBeUndefined();
    expect(routeRefusal(limited, classifyApiRoute('DELETE', '/api/nodes'))).toBeUndefined();
  });

  it("refuses a token limited to nodes the account's uploaded backups, reads too", () => {
    const limited = scope({ nodeIds: [NODE] });
    for (const [method, url] of [['GET', '/api/backups/uploads'], ['DELETE', '/api/backups/uploads/:backupId'], ['POST', '/api/backups/uploads']]) {
      expect(classifyApiRoute(method!, url).accountWide, url).toBe(true);
      expect(routeRefusal(limited, classifyApiRoute(method!, url)), `${method} ${url}`).toMatch(/limited to some nodes/);
      expect(routeRefusal(UNSCOPED, classifyApiRoute(method!, url))).toBeUndefined();
    }
    expect(routeRefusal(scope({ readOnly: true }), classifyApiRoute('GET', '/api/backups/uploads'))).toBeUndefined();
    expect(classifyApiRoute('GET', '/api/nodes/:id/backups').accountWide).toBe(false);
  });

  it('refuses any scoped token the creation and revocation of tokens', () => {
    for (const s of [scope({ nodeIds: [NODE] }), scope({ access: 'api' }), scope({ readOnly: true })]) {
      expect(routeRefusal(s, classifyApiRoute('POST', '/api/tokens'))).toBeDefined();
      expect(routeRefusal(s, classifyApiRoute('DELETE', '/api/tokens/:id'))).toBeDefined();
      expect(routeRefusal(s, classifyApiRoute('GET', '/api/tokens'))).toBeUndefined();
    }
  });
});
