// How the management API's routes are classified for token scopes (accounts/token-scope.ts),
// from the method and the route's URL pattern alone, so a new route is classified the moment it
// is registered and the rules fit in a few lines (docs/API.md "Token scopes"):
// - a route writes unless its method is GET or HEAD (every route of this API keeps to that);
// - a route is about one node when its pattern starts with /api/nodes/:id (the node is the `id`
//   parameter), and DELETE /api/nodes is about the node in its body's `destroyNodeId`;
// - POST /api/tokens and DELETE /api/tokens/:id manage tokens;
// - /api/backups/uploads... are the account's uploaded backups, which belong to no node: a token
//   limited to some nodes may neither read nor change them.
// bearer-auth.ts enforces them in its hooks; test/api/bearer-auth.test.ts checks every route.
import { isScoped, type TokenScope } from '../accounts/token-scope.ts';

export interface ApiRouteScope {
  /** Changes something: refused to read-only tokens. */
  write: boolean;
  /** Where the route names the one node it is about, if it is about one. */
  node: 'param' | 'body' | undefined;
  /** Creates or revokes API tokens: refused to every scoped token. */
  managesTokens: boolean;
  /** About the account beyond any node (uploaded backups): refused, reads too, to a token limited to some nodes. */
  accountWide: boolean;
}

const READ_METHODS = new Set(['GET', 'HEAD']);

export function classifyApiRoute(method: string, url: string | undefined): ApiRouteScope {
  const write = !READ_METHODS.has(method);
  const path = url ?? '';
  const node = path === '/api/nodes/:id' || path.startsWith('/api/nodes/:id/') ? 'param' : method === 'DELETE' && path === '/api/nodes' ? 'body' : undefined;
  return {
    write,
    node,
    managesTokens: write && (path === '/api/tokens' || path.startsWith('/api/tokens/')),
    accountWide: path === '/api/backups/uploads' || path.startsWith('/api/backups/uploads/'),
  };
}

/**
 * Why `scope` may not call the route at all, whatever node it names; undefined when it may (a
 * route about one node is then checked against the token's nodes once its node id is known).
 */
export function routeRefusal(scope: TokenScope, route: ApiRouteScope): string | undefined {
  if (scope.readOnly && route.write) return 'this API token is read-only: it may only read (GET)';
  // A scoped token must not mint a token without its limits, nor revoke the tokens of others.
  if (route.managesTokens && isScoped(scope)) return 'a scoped API token cannot create or revoke tokens; use an unscoped token or the web UI';
  if (scope.nodeIds !== null && route.accountWide) {
    return "this API token is limited to some nodes: it may not read or change the account's uploaded backups, which belong to no node";
  }
  // Creating a node, uploading a backup: writes that reach beyond the token's nodes.
  if (scope.nodeIds !== null && route.write && route.node === undefined) {
    return 'this API token is limited to some nodes: it may not make changes outside them (such as creating a node)';
  }
  return undefined;
}
