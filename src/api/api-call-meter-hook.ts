// Every authenticated management API request counts against its account's monthly API calls
// (usage/api-call-meter.ts), under the node in its path when there is one; past the plan's limit it
// is refused with 429 quota_exceeded, Retry-After (the next month, UTC) and the RateLimit fields.
// Three exceptions, decided in api/quota-routes.ts: an owner's or admin's way out of a spent month
// (counted, never refused), the web UI's own reads of the service's records, and token checks
// by other services (GET /api/verify; these two not counted).
// Registered after the rate limits: a request they refuse is not counted.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import type { ApiCallMeter } from '../usage/api-call-meter.ts';
import { quotaExempt, uiOwnRead, UNMETERED_ROUTES } from './quota-routes.ts';

export function meterApiCalls(scope: FastifyInstance, meter: Pick<ApiCallMeter, 'admit' | 'count'> | undefined) {
  if (!meter) return;
  scope.addHook('onRequest', async (request, reply) => {
    const user = request.user;
    if (!user) return;
    const route = request.routeOptions.url;
    // A web session is the one credential without a token id.
    if (uiOwnRead(user.tokenId === '', request.method, route, request.headers)) return;
    if (UNMETERED_ROUTES.has(`${request.method === 'HEAD' ? 'GET' : request.method} ${route ?? ''}`)) return;
    const nodeId = nodeInPath(route, request.params);
    const caller = { userId: user.id, tokenId: user.tokenId };
    if (quotaExempt(user.role, request.method, route)) {
      meter.count(user.accountId, nodeId, 'api', caller);
      return;
    }
    try {
      await meter.admit(user.accountId, nodeId, 'api', caller);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'quota_exceeded') throw err;
      // The fields go in the answer's head; the body says when in seconds, like rate_limited.
      const { headers, ...details } = err.details ?? {};
      reply.headers(headers as Record<string, string>);
      throw new AppError('quota_exceeded', err.message, details);
    }
  });
}

/** The node a route is about: `/api/nodes/:id...`; '' for the others. */
function nodeInPath(route: string | undefined, params: unknown): string {
  if (!route?.startsWith('/api/nodes/:id')) return '';
  const id = (params as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : '';
}
