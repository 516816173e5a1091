// Every route of the management API behind a bearer token, with a request that reaches it. The
// security suite (bearer-auth.test.ts) runs the shared checks over this table and fails when the
// server registers a route that is neither here nor in its list of public routes. Each route says
// whether it reads or writes and whether it is about one node: the token scope checks follow that.
import type { ScopedRouteUnderTest } from '../helpers/security.ts';

export interface BearerRoute extends ScopedRouteUnderTest {
  /** About one node, named in its path or body: another user's attempt must look like a missing node. */
  nodeScoped: boolean;
}

const ZEROS = '0'.repeat(32);

// Every route of this API that is not GET changes something: a read-only token is refused it
// (docs/API.md "Token scopes"). A route that broke the rule would say so here with `write: false`.
function route(method: string, url: string, path: (nodeId: string) => string, more: Partial<BearerRoute> = {}): BearerRoute {
  return { name: `${method} ${url}`, method, path, nodeScoped: url.includes('/:id') && url.startsWith('/api/nodes/'), write: method !== 'GET', ...more };
}

export const BEARER_ROUTES: BearerRoute[] = [
  // Nodes.
  route('GET', '/api/nodes', () => '/api/nodes'),
  route('POST', '/api/nodes', () => '/api/nodes', { body: () => ({ name: 'x', network: 'regtest' }) }),
  route('DELETE', '/api/nodes', () => '/api/nodes', { body: (id) => ({ destroyNodeId: id }), nodeScoped: true }),
  route('GET', '/api/nodes/latest-rln-image', () => '/api/nodes/latest-rln-image'),
  route('GET', '/api/nodes/:id', (id) => `/api/nodes/${id}`),
  route('GET', '/api/nodes/:id/health', (id) => `/api/nodes/${id}/health`),
  route('GET', '/api/nodes/:id/continuous-state', (id) => `/api/nodes/${id}/continuous-state`),
  route('POST', '/api/nodes/:id/start', (id) => `/api/nodes/${id}/start`),
  route('POST', '/api/nodes/:id/stop', (id) => `/api/nodes/${id}/stop`),
  route('POST', '/api/nodes/:id/upgrade', (id) => `/api/nodes/${id}/upgrade`),
  route('POST', '/api/nodes/:id/unlock', (id) => `/api/nodes/${id}/unlock`, { body: () => ({ password: 'not-the-password' }) }),
  route('POST', '/api/nodes/:id/init', (id) => `/api/nodes/${id}/init`, { body: () => ({ password: 'a-password-of-12' }) }),
  route('PUT', '/api/nodes/:id/auto-unlock', (id) => `/api/nodes/${id}/auto-unlock`, { body: () => ({ password: 'not-the-password' }) }),
  route('DELETE', '/api/nodes/:id/auto-unlock', (id) => `/api/nodes/${id}/auto-unlock`),
  route('POST', '/api/nodes/:id/settings', (id) => `/api/nodes/${id}/settings`, { body: () => ({ settings: { webhookUrl: '' } }) }),
  // Log exports.
  route('POST', '/api/nodes/:id/logs', (id) => `/api/nodes/${id}/logs`),
  route('GET', '/api/nodes/:id/logs', (id) => `/api/nodes/${id}/logs?taskId=${ZEROS}`),
  // Backups.
  route('POST', '/api/nodes/:id/backups', (id) => `/api/nodes/${id}/backups`, { body: () => ({ password: 'a-password-of-12' }) }),
  route('POST', '/api/nodes/:id/export', (id) => `/api/nodes/${id}/export`, { body: () => ({ password: 'a-password-of-12', confirm: 'not-its-name' }) }),
  route('POST', '/api/nodes/:id/recover', (id) => `/api/nodes/${id}/recover`),
  route('GET', '/api/nodes/:id/backups', (id) => `/api/nodes/${id}/backups`),
  route('GET', '/api/nodes/:id/backups/:backupId', (id) => `/api/nodes/${id}/backups/${ZEROS}`),
  route('DELETE', '/api/nodes/:id/backups/:backupId', (id) => `/api/nodes/${id}/backups/${ZEROS}`),
  route('POST', '/api/backups/uploads', () => '/api/backups/uploads', { accountWide: true }),
  route('GET', '/api/backups/uploads', () => '/api/backups/uploads', { accountWide: true }),
  route('DELETE', '/api/backups/uploads/:backupId', () => `/api/backups/uploads/${ZEROS}`, { accountWide: true }),
  // Client certificates.
  route('POST', '/api/nodes/:id/generate-cert', (id) => `/api/nodes/${id}/generate-cert`, { credential: true }),
  route('GET', '/api/nodes/:id/certs', (id) => `/api/nodes/${id}/certs`),
  route('DELETE', '/api/nodes/:id/certs/:serial', (id) => `/api/nodes/${id}/certs/${'ab'.repeat(16)}`, { credential: true }),
  route('POST', '/api/nodes/:id/node-tokens', (id) => `/api/nodes/${id}/node-tokens`, { credential: true, body: () => ({ role: 'read-only' }) }),
  route('GET', '/api/nodes/:id/node-tokens', (id) => `/api/nodes/${id}/node-tokens`),
  route('DELETE', '/api/nodes/:id/node-tokens/:tokenId', (id) => `/api/nodes/${id}/node-tokens/nonexistent`, { credential: true }),
  // Webhooks.
  route('GET', '/api/webhook-public-key', () => '/api/webhook-public-key'),
  route('GET', '/api/webhook-public-keys', () => '/api/webhook-public-keys'),
  route('GET', '/api/nodes/:id/webhooks/deliveries', (id) => `/api/nodes/${id}/webhooks/deliveries`),
  route('POST', '/api/nodes/:id/webhooks/test', (id) => `/api/nodes/${id}/webhooks/test`),
  route('POST', '/api/nodes/:id/webhooks/deliveries/:deliveryId/redeliver', (id) => `/api/nodes/${id}/webhooks/deliveries/dlv_${ZEROS}/redeliver`),
  // The caller's audit trail.
  route('GET', '/api/audit-events', () => '/api/audit-events'),
  // The account's usage of a month.
  route('GET', '/api/usage', () => '/api/usage'),
  // Node events. The stream is only ever called here without a valid token, which is answered
  // 401 before any stream opens (its own cases: test/events/stream.test.ts).
  route('GET', '/api/nodes/:id/events', (id) => `/api/nodes/${id}/events`),
  route('GET', '/api/events/stream', () => '/api/events/stream', { streams: true }),
  // API tokens (another user's token: test/web/session.test.ts).
  route('GET', '/api/tokens', () => '/api/tokens'),
  route('POST', '/api/tokens', () => '/api/tokens', { body: () => ({ name: 'x' }), credential: true }),
  route('DELETE', '/api/tokens/:id', () => `/api/tokens/${'a'.repeat(32)}`, { credential: true }),
  // Checking a token (the original's VSS server's call; a session refused: test/compat/original-newer-clients.test.ts).
  route('GET', '/api/verify', () => '/api/verify'),
  route('PUT', '/api/tokens/:id/monthly-api-calls', () => `/api/tokens/${'a'.repeat(32)}/monthly-api-calls`, { body: () => ({ monthlyApiCalls: 10 }) }),
  // The account's members and invitations (each role and another account's attempts: test/api/members.test.ts).
  route('GET', '/api/account', () => '/api/account'),
  route('GET', '/api/account/members', () => '/api/account/members', { accountWide: true }),
  route('PATCH', '/api/account/members/:userId', () => `/api/account/members/${ZEROS}`, { body: () => ({ role: 'viewer' }), accountWide: true, credential: true }),
  route('DELETE', '/api/account/members/:userId', () => `/api/account/members/${ZEROS}`, { accountWide: true, credential: true }),
  route('PUT', '/api/account/members/:userId/monthly-api-calls', () => `/api/account/members/${ZEROS}/monthly-api-calls`, { body: () => ({ monthlyApiCalls: 10 }), accountWide: true, credential: true }),
  route('POST', '/api/account/invitations', () => '/api/account/invitations', { body: () => ({ email: 'invited@example.com', role: 'viewer' }), accountWide: true, credential: true }),
  route('GET', '/api/account/invitations', () => '/api/account/invitations', { accountWide: true }),
  route('DELETE', '/api/account/invitations/:id', () => `/api/account/invitations/${ZEROS}`, { accountWide: true, credential: true }),
  // Leaving the account (the owner's refusal, and what ends: test/api/leaving.test.ts). Called here
  // without its confirmation, so no member leaves (a 400 past every check of this table).
  route('POST', '/api/account/leave', () => '/api/account/leave', { accountWide: true, credential: true }),
  // Deleting the account, here always with a wrong password (the rest: test/api/account-deletion.test.ts).
  route('DELETE', '/api/account', () => '/api/account', { body: () => ({ password: 'not-the-password' }), accountWide: true, credential: true }),
  // Handing the account to an admin (who may, and the hostile cases: test/api/ownership-transfer.test.ts).
  route('POST', '/api/account/transfer', () => '/api/account/transfer', { body: () => ({ userId: ZEROS }), accountWide: true, credential: true }),
  route('GET', '/api/account/transfer', () => '/api/account/transfer', { accountWide: true }),
  route('DELETE', '/api/account/transfer', () => '/api/account/transfer', { accountWide: true, credential: true }),
  route('POST', '/api/account/transfer/accept', () => '/api/account/transfer/accept', { accountWide: true, credential: true }),
  // The caller's own web sessions (another person's session: test/api/sessions.test.ts).
  route('GET', '/api/sessions', () => '/api/sessions', { accountWide: true }),
  route('DELETE', '/api/sessions', () => '/api/sessions', { accountWide: true, credential: true }),
  route('DELETE', '/api/sessions/:id', () => `/api/sessions/${ZEROS}`, { accountWide: true, credential: true }),
  // The caller's own notification emails (test/api/notifications.test.ts).
  route('GET', '/api/notifications', () => '/api/notifications', { accountWide: true }),
  route('PUT', '/api/notifications', () => '/api/notifications', { accountWide: true, credential: true, body: () => ({ nodeFailed: true }) }),
];

/**
 * Routes served without a bearer token, and why. Anything registered that is in neither list
 * fails the suite until someone decides which list it belongs to.
 */
export const PUBLIC_ROUTES: Record<string, string> = {
  'GET /healthz': 'the health probe of load balancers and supervisors',
  'GET /readyz': 'the readiness probe: says which check fails, never why in detail',
  'GET /api/openapi.json': 'the API description is public',
  'GET /api/session': 'the web UI session: authenticated by its cookie',
  'POST /api/session': 'sign-in: email and password are the credential',
  'DELETE /api/session': 'sign-out: authenticated by the session cookie',
  // Second factors: web sessions only, also half-way ones (test/api/two-factor.test.ts checks each refuses a token and a missing cookie).
  'POST /api/session/second-factor': "a sign-in's second step: the half-way session cookie and a code are the credential",
  'GET /api/me/2fa': 'your second factors: authenticated by the session cookie (also a session that must enrol)',
  'POST /api/me/2fa/totp': 'an authenticator enrolment: authenticated by the session cookie (also a session that must enrol)',
  'POST /api/me/2fa/totp/confirm': "an enrolment's first code: authenticated by the session cookie (also a session that must enrol)",
  'DELETE /api/me/2fa/totp': 'turning the authenticator off: a full session cookie and a current factor',
  'POST /api/me/2fa/passkey-options': "a passkey challenge tied to the session cookie (full, or a sign-in's half-way one) (test/api/passkeys.test.ts)",
  'GET /api/me/passkeys': 'your passkeys: authenticated by the session cookie (also a session that must enrol)',
  'POST /api/me/passkeys/registration-options': "a passkey enrolment's options: the session cookie and its CSRF token (also a session that must enrol)",
  'POST /api/me/passkeys': "a passkey enrolled: the session cookie, its CSRF token and an answer to this session's challenge",
  'PATCH /api/me/passkeys/:id': 'renaming a passkey: a full session cookie and its CSRF token',
  'DELETE /api/me/passkeys/:id': 'removing a passkey: a full session cookie, its CSRF token and a current factor',
  'POST /api/session/passkey/options': 'a password-less sign-in starts: a challenge tied to a one-off cookie, own origin only',
  'POST /api/session/passkey': "a password-less sign-in: a passkey's answer to the challenge of this browser's one-off cookie is the credential",
  'PUT /api/account/two-factor-requirement': "the owner's rule: a full session cookie, the owner's (forbidden_role otherwise)",
  'GET /auth/oidc/:provider': 'OpenID sign-in: sends the browser to the provider (test/api/oidc-signin.test.ts)',
  'GET /auth/oidc/callback': "OpenID sign-in: the provider's code, with a one-time state, PKCE and nonce, is the credential",
  'GET /api/session/oidc': 'linked OpenID providers: authenticated by the session cookie',
  'POST /api/session/oidc/:provider/link': 'linking an OpenID provider: the session cookie and its CSRF token',
  'DELETE /api/session/oidc/:provider': 'unlinking an OpenID provider: the session cookie and its CSRF token',
  // VSS (docs/VSS.md): LDK's protocol, authenticated as LDK's clients do (test/vss/vss-auth.test.ts).
  'POST /vss/:nodeId/:credential/getObject': "VSS: the URL's credential and the node key's signature (sigs) are the credential",
  'POST /vss/:nodeId/:credential/putObjects': "VSS: the URL's credential and the node key's signature (sigs) are the credential",
  'POST /vss/:nodeId/:credential/deleteObject': "VSS: the URL's credential and the node key's signature (sigs) are the credential",
  'POST /vss/:nodeId/:credential/listKeyVersions': "VSS: the URL's credential and the node key's signature (sigs) are the credential",
  'GET /downloads/*': 'log export and backup downloads: the signature in the URL is the credential',
  'GET /': 'web UI page shell (its data comes from the API)',
  'GET /sign-in': 'web UI page shell',
  'GET /tokens': 'web UI page shell',
  'GET /account': 'web UI page shell',
  'GET /two-factor': 'web UI page shell',
  'GET /invitation': "web UI page shell: an invitation link's target (its secret is in the fragment, never sent here)",
  'GET /nodes': 'web UI page shell',
  'GET /nodes/:id': "web UI page shell; another user's node answers 404 (test/web/browser.test.ts)",
  'GET /nodes/:id/connect': 'web UI page shell',
  'GET /ui/*': 'web UI assets',
  'POST /api/signup': 'sign-up: no account yet; limited per client address, per email and globally (test/api/signup.test.ts)',
  'POST /api/signup/verify': "email verification: the emailed one-time link's secret is the credential",
  'POST /api/signup/resend': 'a new verification link: the same answer for every address, limited (test/api/signup.test.ts)',
  'POST /api/password-reset': 'a password reset link: the same answer for every address, limited (test/api/password-reset.test.ts)',
  'POST /api/password-reset/confirm': "a new password: the emailed one-time link's secret is the credential",
  'GET /sign-up': 'web UI page shell',
  'GET /verify-email': "web UI page shell: a verification link's target (its secret is in the fragment, never sent here)",
  'GET /reset-password': "web UI page shell: a reset link's target (its secret is in the fragment, never sent here)",
  'POST /api/account/invitations/accept': "accepting an invitation: its one-time link's secret is the credential (the invited person has no account yet)",
};

/** The docs page's plugin (@fastify/swagger-ui) registers its own routes under this prefix. */
export const PUBLIC_PREFIX = 'GET /api/docs';
