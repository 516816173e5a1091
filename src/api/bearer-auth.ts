// Bearer-token authentication for every route registered inside the scope that uses it. The web
// UI calls the same routes with its session cookie instead (plus the CSRF header on changes).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountService, AuthenticatedUser } from '../accounts/service.ts';
import { AppError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthenticatedUser;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** How the web UI's session cookie authenticates (src/web/sessions.ts). */
export interface SessionAuthenticator {
  hasSessionCookie(request: FastifyRequest): boolean;
  /** The session's user, undefined when it ended; throws forbidden without the CSRF token. */
  authenticate(request: FastifyRequest): Promise<AuthenticatedUser | undefined>;
}

// How each authenticated request's credential is checked again (stillAuthenticated).
const credentialChecks = new WeakMap<FastifyRequest, () => Promise<AuthenticatedUser | undefined>>();

export function requireBearerAuth(app: FastifyInstance, accounts: AccountService, sessions?: SessionAuthenticator) {
  app.decorateRequest('user', undefined);
  app.addHook('onRequest', async (request, reply) => {
    // An Authorization header always means bearer authentication, exactly as without sessions.
    if (sessions && request.headers.authorization === undefined && sessions.hasSessionCookie(request)) {
      const user = await sessions.authenticate(request);
      if (!user) throw new AppError('unauthorized', 'your session has expired or was signed out; sign in again');
      request.user = user;
      credentialChecks.set(request, () => sessions.authenticate(request));
      return;
    }
    const token = bearerToken(request);
    const user = token ? await accounts.authenticate(token) : undefined;
    if (!user) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError('unauthorized', token ? 'the API token is invalid, expired or revoked' : 'send an API token: Authorization: Bearer <token>');
    }
    request.user = user;
    credentialChecks.set(request, () => accounts.authenticate(token!));
  });
}

/**
 * Whether the credential a request came with still belongs to its user (a long stream asks now and
 * then, so a revoked token or an ended session stops it). False when it cannot be told.
 */
export async function stillAuthenticated(request: FastifyRequest): Promise<boolean> {
  const check = credentialChecks.get(request);
  if (!check || !request.user) return false;
  try {
    return (await check())?.id === request.user.id;
  } catch {
    return false;
  }
}

/** The authenticated user of a request in a bearer scope. */
export function userOf(request: FastifyRequest): AuthenticatedUser {
  if (!request.user) throw new AppError('unauthorized', 'not authenticated');
  return request.user;
}
