// The management routes the monthly API call quota never refuses to an account's owners and admins
// (docs/USAGE.md "Which routes the quota covers"), so a spent quota cannot lock them out of the
// account (issue #36): they can still see where the calls went, take access away from whoever spent
// them, and stop or destroy what costs. Each is still counted and keeps the ordinary rate limits.
// Every other route, and every route for developers and viewers, is covered by the quota.
// test/api/quota-exempt.test.ts calls each entry with the quota spent.
import type { Role } from '../domain/roles.ts';

export const QUOTA_EXEMPT_ROUTES: ReadonlySet<string> = new Set([
  // Where the calls went.
  'GET /api/account',
  'GET /api/usage',
  // The people and their invitations.
  'GET /api/account/members',
  'PATCH /api/account/members/:userId',
  'DELETE /api/account/members/:userId',
  'GET /api/account/invitations',
  'POST /api/account/invitations',
  'DELETE /api/account/invitations/:id',
  // Caps on a member's or token's calls (the way to stop one from spending the next month).
  'PUT /api/account/members/:userId/monthly-api-calls',
  'PUT /api/tokens/:id/monthly-api-calls',
  // Credentials: API tokens and client certificates.
  'GET /api/tokens',
  'POST /api/tokens',
  'DELETE /api/tokens/:id',
  'GET /api/nodes/:id/certs',
  'DELETE /api/nodes/:id/certs/:serial',
  // What costs: stopping and destroying nodes.
  'POST /api/nodes/:id/stop',
  'DELETE /api/nodes',
]);

const EXEMPT_ROLES: ReadonlySet<Role> = new Set(['owner', 'admin']);

/** Whether the quota lets this call through however spent the month is (it is counted all the same). */
export function quotaExempt(role: Role, method: string, url: string | undefined): boolean {
  // HEAD is the GET route's (Fastify registers it beside every GET).
  return EXEMPT_ROLES.has(role) && QUOTA_EXEMPT_ROUTES.has(`${method === 'HEAD' ? 'GET' : method} ${url ?? ''}`);
}

// The web UI's own reads of the service's records (issue #36): a page load or refresh with the
// session cookie, GET, and this header, which the UI's one API helper (web/public/api.js) sends on
// every read. They are not counted at all. Anyone holding the cookie can send the header too, and
// it buys nothing that matters: only GETs of what the service itself keeps are let through
// uncounted; a GET that reaches a node (below), every change, and every call with a token are
// counted and refused by the quota as usual, and the ordinary rate limits apply to all of them.
export const UI_READ_HEADER = 'x-rlnc-ui';

// The reads that ask a node's daemon, not the service's records: counted whoever asks.
const READS_REACHING_A_NODE: ReadonlySet<string> = new Set(['GET /api/nodes/:id/health']);

// Not metered at all: a service the customer uses checking the customer's token (the original's
// VSS server calls GET /api/verify on its customers' requests). Counting it would spend the
// customer's calls on someone else's checks, and refusing it past the quota would stop the node's
// channel-state backups to that server; the ordinary rate limits apply.
export const UNMETERED_ROUTES: ReadonlySet<string> = new Set(['GET /api/verify']);

/** Whether a request is the web UI's own read of the service's records: not metered. */
export function uiOwnRead(viaSession: boolean, method: string, url: string | undefined, headers: Record<string, unknown>): boolean {
  if (!viaSession || (method !== 'GET' && method !== 'HEAD') || headers[UI_READ_HEADER] === undefined) return false;
  return !READS_REACHING_A_NODE.has(`GET ${url ?? ''}`);
}
