// How the management API's routes are classified for token scopes (accounts/token-scope.ts),
// from the method and the route's URL pattern alone, so a new route is classified the moment it
// is registered and the rules fit in a few lines (docs/API.md "Token scopes"):
// - a route writes unless its method is GET or HEAD (every route of this API keeps to that);
// - a route is about one node when its pattern starts with /api/nodes/:id (the node is the `id`
//   parameter), and DELETE /api/nodes is about the node in its body's `destroyNodeId`;
// - POST /api/tokens and DELETE /api/tokens/:id manage tokens; POST /api/nodes/:id/generate-cert and
//   DELETE /api/nodes/:id/certs/:serial manage client certificates, POST and DELETE
//   /api/nodes/:id/node-tokens... customers' node tokens: all are credentials;
// - /api/backups/uploads... are the account's uploaded backups, which belong to no node: a token
//   limited to some nodes may neither read nor change them;
// - /api/account/members... and /api/account/invitations... are the account's people: a token
//   limited to some nodes may not read them, and every change of them is a credential's (an
//   invitation makes a user with a password, a role change widens one).
// bearer-auth.ts enforces them in its hooks; test/api/bearer-auth.test.ts checks every route.
import { isScoped, type TokenScope } from '../accounts/token-scope.ts';

export interface ApiRouteScope {
  /** Changes something: refused to read-only tokens. */
  write: boolean;
  /** Where the route names the one node it is about, if it is about one. */
  node: 'param' | 'body' | undefined;
  /**
   * Issues or revokes a credential (an API token, a client certificate): refused to every scoped
   * token, which must never produce a credential with more rights than its own. A certificate
   * opens the mutual-TLS gateway, with every right on its node, and outlives the revocation of the
   * token that asked for it, so even a token limited to that very node could widen itself.
   */
  managesCredentials: boolean;
  /** About the account beyond any node (uploaded backups): refused, reads too, to a token limited to some nodes. */
  accountWide: boolean;
}

// A node token is a credential too: it opens the bearer gateway on its own (issue #40).
const CREDENTIAL_ROUTES = new Set([
  'POST /api/tokens',
  'DELETE /api/tokens/:id',
  'POST /api/nodes/:id/generate-cert',
  'DELETE /api/nodes/:id/certs/:serial',
  'POST /api/nodes/:id/node-tokens',
  'DELETE /api/nodes/:id/node-tokens/:tokenId',
]);

const READ_METHODS = new Set(['GET', 'HEAD']);

// The person's own sessions and notification emails, leaving, handing over and deleting the account
// count as the account's people too: a scoped token may neither read nor change them.
const MEMBER_PREFIXES = ['/api/account/members', '/api/account/invitations', '/api/sessions', '/api/notifications', '/api/account/leave', '/api/account/transfer'];
const isMemberRoute = (path: string) => MEMBER_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

export function classifyApiRoute(method: string, url: string | undefined): ApiRouteScope {
  const write = !READ_METHODS.has(method);
  const path = url ?? '';
  const deletesAccount = method === 'DELETE' && path === '/api/account';
  const node = path === '/api/nodes/:id' || path.startsWith('/api/nodes/:id/') ? 'param' : method === 'DELETE' && path === '/api/nodes' ? 'body' : undefined;
  return {
    write,
    node,
    managesCredentials: CREDENTIAL_ROUTES.has(`${method} ${path}`) || (write && isMemberRoute(path)) || deletesAccount,
    accountWide: path === '/api/backups/uploads' || path.startsWith('/api/backups/uploads/') || isMemberRoute(path) || deletesAccount,
  };
}

/**
 * Why `scope` may not call the route at all, whatever node it names; undefined when it may (a
 * route about one node is then checked against the token's nodes once its node id is known).
 */
export function routeRefusal(scope: TokenScope, route: ApiRouteScope): string | undefined {
  if (scope.readOnly && route.write) return 'this API token is read-only: it may only read (GET)';
  // A scoped token must not mint a credential without its limits, nor revoke the credentials of others.
  if (route.managesCredentials && isScoped(scope)) {
    return 'a scoped API token cannot create or revoke tokens or client certificates, nor invite, change or remove members; use an unscoped token or the web UI';
  }
  if (scope.nodeIds !== null && route.accountWide) {
    return "this API token is limited to some nodes: it may not read or change the account's uploaded backups or members, which belong to no node";
  }
  // Creating a node, uploading a backup: writes that reach beyond the token's nodes.
  if (scope.nodeIds !== null && route.write && route.node === undefined) {
    return 'this API token is limited to some nodes: it may not make changes outside them (such as creating a node)';
  }
  return undefined;
}
