// POST /api/nodes/{id}/webhooks/deliveries/{deliveryId}/redeliver: sends a finished delivery's
// event again, as a new delivery with the same webhook-id, to the node's current webhook URL.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ID_PATTERN } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const RedeliverParams = Type.Object({
  id: Type.String({ pattern: ID_PATTERN, description: 'Node id: 32 lowercase hex characters.' }),
  deliveryId: Type.String({ pattern: '^dlv_[0-9a-f]{32}$', description: 'A deliveryId from the deliveries list.' }),
});
type RedeliverParams = Static<typeof RedeliverParams>;

export function redeliverRoute(app: FastifyInstance, { webhooks }: ApiDeps) {
  app.post<{ Params: RedeliverParams }>(
    '/api/nodes/:id/webhooks/deliveries/:deliveryId/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhook',
        summary: 'Redeliver a webhook',
        description:
          'Queues the event again behind the node\'s other deliveries; the receiver sees the same webhook-id. ' +
          '409 `invalid_state` while the delivery is still pending, `webhook_not_configured` when the node has no webhook URL; 404 `delivery_not_found`.',
        tags: ['webhooks'],
        params: RedeliverParams,
        response: {
          200: Type.Object({ data: Type.Object({ deliveryId: Type.String() }), message: Type.String() }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const deliveryId = await webhooks.redeliver(userOf(request).accountId, request.params.id, request.params.deliveryId);
      return { data: { deliveryId }, message: `Delivery ${request.params.deliveryId} queued again as ${deliveryId}` };
    },
  );
}
