// The OpenAPI 3.1 `webhooks` entry: the request the service sends to a node's webhook URL, so the
// event envelope, the signature headers and the answers we act on sit in the API document too.
import type { OpenAPIV3_1 } from 'openapi-types';
import { WEBHOOK_EVENTS_DESCRIPTION } from './schemas.ts';

type PathItem = OpenAPIV3_1.PathItemObject;

const header = (name: string, description: string, example: string, required = true): OpenAPIV3_1.ParameterObject => ({
  name,
  in: 'header' as const,
  required,
  description,
  schema: { type: 'string' as const },
  example,
});

export const WEBHOOKS_OPENAPI: Record<string, PathItem> = {
  nodeEvent: {
    post: {
      operationId: 'nodeEvent',
      summary: 'An event about a node, POSTed to its settings.webhookUrl',
      description: WEBHOOK_EVENTS_DESCRIPTION,
      tags: ['webhooks'],
      security: [],
      parameters: [
        header('webhook-id', 'The event id: the same on every retry and redelivery; deduplicate on it.', 'evt_6f1c0d3e9b8a4f2c8d7e6f5a4b3c2d1e'),
        header('webhook-timestamp', 'Unix seconds of this attempt.', '1767225600'),
        header(
          'webhook-signature',
          '`v1a,<base64 Ed25519 signature>` over `<webhook-id>.<webhook-timestamp>.<raw body>`; two, space-separated, during a key rotation. ' +
            'Sent unless the operator turned standard-webhooks-v1a off.',
          'v1a,K5lJ0ZC1i8yD2...==',
          false,
        ),
        header(
          'X-ThunderStack-Signature',
          "The original hosted service's signature: base64 RSA-SHA256 (PKCS#1 v1.5) over the raw body alone, by the key of GET /api/webhook-public-key. " +
            'It signs no timestamp, so a replayed request verifies too. Sent unless the operator turned thunderstack-rsa-sha256 off.',
          'kR3vQ0b1...==',
          false,
        ),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' } } } },
      responses: {
        '2XX': { description: 'Delivered.' },
        '410': { description: 'Gone: the service stops sending to this URL and removes it from the node.' },
        '429': { description: 'Retried after Retry-After (seconds or an HTTP date), or on the schedule.' },
        '503': { description: 'Retried after Retry-After (seconds or an HTTP date), or on the schedule.' },
        default: { description: 'Any other answer, or none within 15 s: retried on the schedule.' },
      },
    },
  },
};
