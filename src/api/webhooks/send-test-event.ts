// POST /api/nodes/{id}/webhooks/test: records a TEST event, delivered like every other event.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export function sendTestEventRoute(app: FastifyInstance, { webhooks }: ApiDeps) {
  app.post<{ Params: NodeIdParams }>(
    '/api/nodes/:id/webhooks/test',
    {
      schema: {
        operationId: 'sendTestWebhook',
        summary: 'Send a test webhook',
        description:
          'A `TEST` event `{eventType: "TEST", eventTimestamp, nodeId, details: {nodeId, message}}`, signed and delivered like every event, ' +
          'in order with the node\'s other events; follow it in the deliveries list. 409 `webhook_not_configured` when the node has no webhook URL.',
        tags: ['webhooks'],
        params: NodeIdParams,
        response: { 200: Type.Object({ data: Type.Object({ eventId: Type.String() }), message: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const eventId = await webhooks.sendTestEvent(userOf(request).id, request.params.id);
      return { data: { eventId }, message: `Test event ${eventId} queued for delivery` };
    },
  );
}
