// The least role of an account's members (domain/roles.ts) that may call each management route,
// from the method and the route's URL pattern alone, so a new route has a role the moment it is
// registered (docs/API.md "Accounts and roles"):
// - reads (GET, HEAD) are every member's, the viewer's too;
// - changing the account's members and invitations, capping a token's calls, exporting a node (it
//   leaves for good) and recovering one (its old volume goes) is an admin's;
// - changing the account itself (its plan, its owner, deleting it) is the owner's; accepting its
//   ownership is an admin's (the one it was offered to);
// - a person's own sessions and notification emails, and leaving the account, are every member's;
// - every other change (nodes, tokens, certificates, backups, webhooks) is a developer's.
// bearer-auth.ts enforces it before the route's body is read; test/api/roles.test.ts checks every
// registered route against a table of its own.
import type { Role } from '../domain/roles.ts';

const READ_METHODS = new Set(['GET', 'HEAD']);

const ADMIN_PREFIXES = ['/api/account/members', '/api/account/invitations'];
// Capping a token's calls is an admin's, whoever's token it is (a developer must not lift a cap);
// exporting a node is too: it stops the node here for good, its wallet gone with the file; and so is
// recovering one: what is left of its old volume is removed for good.
const ADMIN_ROUTES = new Set(['/api/tokens/:id/monthly-api-calls', '/api/nodes/:id/export', '/api/nodes/:id/recover']);
const OWN_PREFIXES = ['/api/sessions', '/api/notifications', '/api/account/leave'];
const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

export function leastRoleOf(method: string, url: string | undefined): Role {
  if (READ_METHODS.has(method)) return 'viewer';
  const path = url ?? '';
  if (OWN_PREFIXES.some((prefix) => under(path, prefix))) return 'viewer';
  if (ADMIN_PREFIXES.some((prefix) => under(path, prefix)) || ADMIN_ROUTES.has(path)) return 'admin';
  if (path === '/api/account/transfer/accept') return 'admin';
  if (path === '/api/account' || under(path, '/api/account/transfer')) return 'owner';
  return 'developer';
}
