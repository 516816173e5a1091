// GET /api/nodes/{id}/webhooks/deliveries: a node's recent deliveries with every attempt.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const ListDeliveriesQuery = Type.Object(
  { limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|1[0-9][0-9]|200)$', description: '1-200, default 50.' })) },
  { additionalProperties: false },
);
type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export function listDeliveriesRoute(app: FastifyInstance, { webhooks }: ApiDeps) {
  app.get<{ Params: NodeIdParams; Querystring: ListDeliveriesQuery }>(
    '/api/nodes/:id/webhooks/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "A node's webhook deliveries",
        description: 'Newest first, each with its attempts in order (status code or error, duration, address connected to).',
        tags: ['webhooks'],
        params: NodeIdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('WebhookDelivery')) }), ...errorResponses },
      },
    },
    async (request) => ({
      data: await webhooks.listDeliveries(userOf(request).id, request.params.id, Number(request.query.limit ?? 50)),
    }),
  );
}
