// Bearer-token authentication for every route registered inside the scope that uses it.
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

export function requireBearerAuth(app: FastifyInstance, accounts: AccountService) {
  app.decorateRequest('user', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request);
    const user = token ? await accounts.authenticate(token) : undefined;
    if (!user) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError('unauthorized', token ? 'the API token is invalid, expired or revoked' : 'send an API token: Authorization: Bearer <token>');
    }
    request.user = user;
  });
}

/** The authenticated user of a request in a bearer scope. */
export function userOf(request: FastifyRequest): AuthenticatedUser {
  if (!request.user) throw new AppError('unauthorized', 'not authenticated');
  return request.user;
}
