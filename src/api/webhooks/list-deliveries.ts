// GET /api/nodes/{id}/webhooks/deliveries: a node's recent deliveries with every attempt.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NextCursor, NodeIdParams, pageParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const ListDeliveriesQuery = Type.Object(pageParams('Deliveries', 'default 50'), { additionalProperties: false });
type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export function listDeliveriesRoute(app: FastifyInstance, { webhooks }: ApiDeps) {
  app.get<{ Params: NodeIdParams; Querystring: ListDeliveriesQuery }>(
    '/api/nodes/:id/webhooks/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "A node's webhook deliveries",
        description: 'Newest first, in pages, each with its attempts in order (status code or error, duration, address connected to).',
        tags: ['webhooks'],
        params: NodeIdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: Type.Object({ data: Type.Array(Type.Ref('WebhookDelivery')), nextCursor: NextCursor }), ...errorResponses },
      },
    },
    async (request) => webhooks.listDeliveries(userOf(request).accountId, request.params.id, Number(request.query.limit ?? 50), request.query.cursor),
  );
}
