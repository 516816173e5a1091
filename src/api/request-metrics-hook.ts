// Every answer of the API listener is counted and timed under its route's pattern
// (`/api/nodes/:id`), never its path: a path carries node ids and whatever a client sends, and one
// series per value would grow without bound. A request no route matched is `unmatched`.
import type { FastifyInstance } from 'fastify';

export interface ApiRequestMetrics {
  apiRequestAnswered(method: string, route: string, status: number, seconds: number): void;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function measureAnswers(app: FastifyInstance, metrics: ApiRequestMetrics) {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    // An unknown method (node:http takes many) is a client's word too: one value for them all.
    const method = METHODS.has(request.method) ? request.method : 'other';
    metrics.apiRequestAnswered(method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}
