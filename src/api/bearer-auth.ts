// Bearer-token authentication for every route registered inside the scope that uses it, and the
// one place the management API enforces token scopes. The web UI calls the same routes with its
// session cookie instead (plus the CSRF header on changes); a session is unscoped.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountService, AuthenticatedUser } from '../accounts/service.ts';
import { allowsNode, forbiddenScope, requireListener } from '../accounts/token-scope.ts';
import { RememberedTokens } from '../accounts/remembered-tokens.ts';
import { tokenFromAuthorization } from '../auth/authorization-header.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { classifyApiRoute, routeRefusal } from './route-scope.ts';
import { leastRoleOf } from './route-roles.ts';
import { roleAllows } from '../domain/roles.ts';
import { ErrorBody } from './schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthenticatedUser;
  }
}

/** The request's API token: `Authorization: Bearer <token>` or the bare `Authorization: <token>`. */
export function bearerToken(request: FastifyRequest): string | undefined {
  return tokenFromAuthorization(request.headers.authorization);
}

/** How the web UI's session cookie authenticates (src/web/sessions.ts). */
export interface SessionAuthenticator {
  hasSessionCookie(request: FastifyRequest): boolean;
  /** The session's user, undefined when it ended; throws forbidden without the CSRF token. */
  authenticate(request: FastifyRequest): Promise<AuthenticatedUser | undefined>;
}

export interface BearerAuthDeps {
  accounts: AccountService;
  sessions?: SessionAuthenticator;
  /** Whether the user has this node: tells a node outside a token's scope (403) from a missing one (404). */
  ownsNode: (userId: string, nodeId: string) => Promise<boolean>;
  /**
   * How long a checked token is remembered (accounts/remembered-tokens.ts): only when this process
   * is the database's only one (PGlite); 0 or absent, every request reads its token afresh.
   */
  rememberTokensMs?: number;
}

// How each authenticated request's credential is checked again (stillAuthenticated).
const credentialChecks = new WeakMap<FastifyRequest, () => Promise<AuthenticatedUser | undefined>>();

export function requireBearerAuth(app: FastifyInstance, { accounts, sessions, ownsNode, rememberTokensMs = 0 }: BearerAuthDeps) {
  const tokens = new RememberedTokens(accounts, rememberTokensMs);
  app.decorateRequest('user', undefined);
  // Every route of the scope may answer 403 forbidden_scope: say so in the OpenAPI document once.
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (response && !('403' in response)) {
      response['403'] = Type.Ref(ErrorBody, { description: 'forbidden_scope: the API token is not allowed this route or node (see docs/API.md "Token scopes"); forbidden_role: the member\'s role is below the route\'s (docs/API.md "Accounts and roles")' });
    }
  });
  app.addHook('onRequest', async (request, reply) => {
    // An Authorization header always means bearer authentication, exactly as without sessions.
    if (sessions && request.headers.authorization === undefined && sessions.hasSessionCookie(request)) {
      const user = await sessions.authenticate(request);
      if (!user) throw new AppError('unauthorized', 'your session has expired or was signed out; sign in again');
      request.user = user;
      credentialChecks.set(request, () => sessions.authenticate(request));
      requireRole(user, request.method, request.routeOptions.url);
      return;
    }
    const token = bearerToken(request);
    const user = token ? await tokens.authenticate(token) : undefined;
    if (!user) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError('unauthorized', token ? 'the API token is invalid, expired or revoked' : 'send an API token: Authorization: Bearer <token>');
    }
    request.user = user;
    credentialChecks.set(request, () => accounts.authenticate(token!));
    // What the route is decides before its body is even read (an upload is never streamed in).
    requireRole(user, request.method, request.routeOptions.url);
    requireListener(user.scope, 'api');
    const refusal = routeRefusal(user.scope, classifyApiRoute(request.method, request.routeOptions.url));
    if (refusal) throw forbiddenScope(refusal);
  });
  // The node a route is about is known once its parameters and body are validated.
  app.addHook('preHandler', async (request) => {
    const user = request.user;
    if (!user || user.scope.nodeIds === null) return;
    const { node } = classifyApiRoute(request.method, request.routeOptions.url);
    const nodeId =
      node === 'param' ? (request.params as { id?: string }).id
      : node === 'body' ? (request.body as { destroyNodeId?: string } | undefined)?.destroyNodeId
      : undefined;
    if (nodeId === undefined || allowsNode(user.scope, nodeId)) return;
    // Another user's node stays indistinguishable from a missing one, whatever the token.
    if (!(await ownsNode(user.accountId, nodeId))) throw nodeNotFound(nodeId);
    throw forbiddenScope(`this API token is limited to other nodes than ${nodeId}`);
  });
}

/**
 * Whether the credential a request came with still belongs to its user, and their role in the
 * account now still allows the route (a long stream asks when its member changes, and now and then,
 * so a revoked token, an ended session, a removal or a demotion below the route stops it). False
 * when it cannot be told.
 */
export async function stillAuthenticated(request: FastifyRequest): Promise<boolean> {
  const check = credentialChecks.get(request);
  if (!check || !request.user) return false;
  try {
    const now = await check();
    return now?.id === request.user.id && roleAllows(now.role, leastRoleOf(request.method, request.routeOptions.url));
  } catch {
    return false;
  }
}

/** The authenticated user of a request in a bearer scope. */
export function userOf(request: FastifyRequest): AuthenticatedUser {
  if (!request.user) throw new AppError('unauthorized', 'not authenticated');
  return request.user;
}

/** 403 forbidden_role when the member's role is below the route's least role (route-roles.ts). */
function requireRole(user: AuthenticatedUser, method: string, url: string | undefined) {
  const least = leastRoleOf(method, url);
  if (!roleAllows(user.role, least)) {
    throw new AppError('forbidden_role', `your role in this account is ${user.role}; ${method} ${url ?? ''} needs ${least} or above`, { role: user.role, leastRole: least });
  }
}
