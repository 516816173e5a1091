// Schemas of the webhook routes and of the events themselves (documented in the OpenAPI document).
import { Type } from '@sinclair/typebox';
import { NODE_EVENT_TYPES } from '../../domain/node-events.ts';

export const WEBHOOK_EVENTS_DESCRIPTION =
  'Each event is POSTed as JSON `{eventType, eventTimestamp, nodeId, details: {nodeId, ...}}` to the node\'s `settings.webhookUrl`, ' +
  'signed by the Standard Webhooks scheme with Ed25519: headers `webhook-id` (the event id, the same on every retry and redelivery), ' +
  '`webhook-timestamp` (unix seconds of the attempt) and `webhook-signature: v1a,<base64 signature>` over `<webhook-id>.<webhook-timestamp>.<raw body>`, ' +
  'verified with the standard-webhooks-v1a keys of GET /api/webhook-public-keys. During a key rotation the header carries two signatures separated by a space; ' +
  'accept the request when one verifies. Also, as the original hosted service signed: `X-ThunderStack-Signature`, a base64 RSA-SHA256 (PKCS#1 v1.5) signature ' +
  'over the raw body alone (no timestamp: a replayed request verifies too; prefer Standard Webhooks), verified with the key of GET /api/webhook-public-key; ' +
  'the body is compact JSON, so JSON.stringify of the parsed body is the raw body. The operator may turn either scheme off. Event types: NODE_STATUS_UPDATED (details.status, details.previousStatus), NODE_LOCKED, NODE_UNLOCKED, ' +
  'NODE_UPGRADE_AVAILABLE (a release the node\'s plan does not apply automatically), NODE_UPGRADE_COMPLETED, NODE_UPGRADE_FAILED, ' +
  'NODE_AUTO_UNLOCK_DISABLED (the service turned automatic unlock off: details.reason wrong_password, not_initialized or seal_unreadable), ' +
  'LOG_EXPORT_READY, NODE_BACKUP_COMPLETED (details.backupId, sizeBytes, sha256), NODE_BACKUP_FAILED (details.backupId, code, reason), ' +
  'both with details.unlockError when the node could not be unlocked again after the backup, ' +
  'NODE_EXPORTED (the export\'s final backup is stored and the node is EXPORTED for good: details.backupId, sizeBytes, sha256), ' +
  'NODE_STORAGE_LOST (the node\'s volume is gone and it is STORAGE_LOST until POST /api/nodes/{id}/recover: details.detectedBy volume or daemon, reason), TEST (from POST /api/nodes/{id}/webhooks/test). Any 2xx answer within 15 s is success; otherwise the event is retried ' +
  '(by default immediately, after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, with jitter), honouring Retry-After on 429 and 503; ' +
  '410 stops deliveries and removes the URL. Redirects are not followed. A node\'s events are delivered one at a time, in order; ' +
  'delivery is at least once, so deduplicate on webhook-id.';

export const WebhookEvent = Type.Object(
  {
    eventType: Type.Union(NODE_EVENT_TYPES.map((t) => Type.Literal(t))),
    eventTimestamp: Type.String({ format: 'date-time', description: 'When the change happened.' }),
    nodeId: Type.String(),
    details: Type.Object(
      { nodeId: Type.String(), status: Type.Optional(Type.String()) },
      { additionalProperties: true, description: 'Always nodeId; NODE_STATUS_UPDATED adds status and previousStatus; other types add their own fields.' },
    ),
  },
  { $id: 'WebhookEvent', description: WEBHOOK_EVENTS_DESCRIPTION },
);

export const WebhookAttempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  url: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  durationMs: Type.Integer(),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status answered, or null when there was no answer.' }),
  remoteAddress: Type.Union([Type.String(), Type.Null()], { description: 'The address connected to.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why there was no answer (refused target, connection error, timeout).' }),
});

export const WebhookDelivery = Type.Object(
  {
    deliveryId: Type.String(),
    eventId: Type.String({ description: 'The webhook-id header.' }),
    eventType: Type.String(),
    event: Type.Ref(WebhookEvent),
    url: Type.String({ description: 'The webhook URL when the delivery was created; each attempt shows where it went.' }),
    state: Type.Union(['pending', 'delivering', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s)), {
      description:
        'pending: waiting for its turn (a node\'s events go in order) or its next attempt; delivering: an attempt is under way; ' +
        'succeeded; failed: every attempt failed, or the receiver answered 410; cancelled: the node has no webhook URL any more.',
    }),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    redeliveryOf: Type.Union([Type.String(), Type.Null()], { description: 'The delivery this one redelivers.' }),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    attempts: Type.Array(WebhookAttempt),
  },
  { $id: 'WebhookDelivery' },
);
