// GET /api/webhook-public-key: the key receivers verify webhook signatures with.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { WEBHOOK_EVENTS_DESCRIPTION } from './schemas.ts';

export function webhookPublicKeyRoute(app: FastifyInstance, { webhooks }: ApiDeps) {
  app.get(
    '/api/webhook-public-key',
    {
      schema: {
        operationId: 'getWebhookPublicKey',
        summary: 'The public key of webhook signatures',
        description:
          'An Ed25519 public key in PEM (SPKI). After a key rotation this is the new key at once; the previous key keeps signing beside it ' +
          'during the overlap, so a receiver can refresh its copy at any time within it. ' + WEBHOOK_EVENTS_DESCRIPTION,
        tags: ['webhooks'],
        response: { 200: Type.Object({ data: Type.String({ description: 'PEM, "-----BEGIN PUBLIC KEY-----..."' }) }), 401: errorResponses[401] },
      },
    },
    async () => ({ data: webhooks.publicKeyPem() }),
  );
}
