// GET /api/webhook-public-keys: every key that signs webhooks, or will sign them after a rotation's
// overlap, of every scheme the operator left on; what a receiver caches and refreshes.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { SCHEME_HEADERS, SIGNATURE_SCHEMES } from '../../webhooks/signature-schemes.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const nullableTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

const WebhookPublicKey = Type.Object({
  scheme: Type.Union(SIGNATURE_SCHEMES.map((s) => Type.Literal(s)), {
    description: '`thunderstack-rsa-sha256`: RSA-SHA256 PKCS#1 v1.5 over the raw body; `standard-webhooks-v1a`: Ed25519 over `<webhook-id>.<webhook-timestamp>.<raw body>`.',
  }),
  header: Type.Union(SIGNATURE_SCHEMES.map((s) => Type.Literal(SCHEME_HEADERS[s])), { description: 'The request header the signature travels in.' }),
  keyId: Type.String(),
  publicKey: Type.String({ description: 'PEM (SPKI), "-----BEGIN PUBLIC KEY-----..."' }),
  current: Type.Boolean({
    description: 'thunderstack-rsa-sha256: this key signs now (one key at a time); standard-webhooks-v1a: the newest of the keys signing now.',
  }),
  createdAt: nullableTime('When the key was made (null for a key the operator gave as bare PEM).'),
  signsFrom: nullableTime('When it signs from: in the future for a rotated-in RSA key during the overlap; null when not known.'),
  signsUntil: nullableTime('When it stops signing, once a rotation has decided it.'),
  retiresAt: nullableTime('When it is no longer listed.'),
});

export function webhookPublicKeysRoute(app: FastifyInstance, { webhooks }: ApiDeps) {
  app.get(
    '/api/webhook-public-keys',
    {
      schema: {
        operationId: 'listWebhookPublicKeys',
        summary: 'Every public key of webhook signatures',
        description:
          'The keys in use by each signature scheme the operator left on, current ones first. Accept a webhook whose signature verifies with any ' +
          'listed key of its scheme; when none does, fetch this again once (a rotation may have published a key since) and retry. A rotation ' +
          'lists the next RSA key at once, not current, with the time it starts signing; the previous one keeps signing until then and stays listed ' +
          'for as long again. A rotated-out Ed25519 key keeps signing beside the new one, in the same header, until it retires.',
        tags: ['webhooks'],
        response: { 200: Type.Object({ data: Type.Array(WebhookPublicKey) }), 401: errorResponses[401] },
      },
    },
    async () => ({ data: webhooks.publishedKeys() }),
  );
}
