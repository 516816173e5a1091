// GET /api/webhook-public-key: the key receivers of the original service's signature verify with.
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
        summary: 'The public key of the X-ThunderStack-Signature header',
        description:
          'The RSA public key in PEM (SPKI) that signs `X-ThunderStack-Signature` now, as the original hosted service answered it (the Ed25519 key ' +
          'of `webhook-signature` when the operator turned that scheme off). A key rotation publishes the next key at once in ' +
          'GET /api/webhook-public-keys and switches to it when the overlap ends: from then on this answers the new key, so a receiver whose ' +
          'signature check fails should fetch this once more and retry. ' + WEBHOOK_EVENTS_DESCRIPTION,
        tags: ['webhooks'],
        response: { 200: Type.Object({ data: Type.String({ description: 'PEM (SPKI), "-----BEGIN PUBLIC KEY-----..."' }) }), 401: errorResponses[401] },
      },
    },
    async () => ({ data: webhooks.publicKeyPem() }),
  );
}
