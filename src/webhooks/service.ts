// What users do with webhooks through the API: check a URL before it is saved, read the public
// key, list a node's deliveries, redeliver one, and send a test event.
import type { Database } from '../db/database.ts';
import { findUserNode, lockUserNode } from '../db/nodes.ts';
import { findNodeDelivery, insertRedelivery, listNodeDeliveries, type AttemptRow, type DeliveryRow } from '../db/webhook-deliveries.ts';
import { decodeCursor, encodeCursor, pageOf, staleCursor } from '../domain/paging.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { recordNodeEvent } from '../db/node-events.ts';
import { checkWebhookUrl, systemResolveAll, type ResolveAll, type WebhookTargetPolicy } from './target-url.ts';
import type { PublishedKey, WebhookKeyring } from './signing-keys.ts';

export interface WebhookServiceDeps {
  db: Database;
  keyring: WebhookKeyring;
  policy: WebhookTargetPolicy;
  resolveAll?: ResolveAll;
}

export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /**
   * GET /api/webhook-public-key: the key of X-ThunderStack-Signature, as the original service
   * answered, so its receivers work unchanged; the Ed25519 key when that scheme does not sign.
   */
  publicKeyPem(): string {
    return this.deps.keyring.thunderStackPublicKeyPem() ?? this.deps.keyring.currentPublicKeyPem();
  }

  /** GET /api/webhook-public-keys: every key in use, of every scheme that signs. */
  publishedKeys(): PublishedKey[] {
    return this.deps.keyring.publishedKeys();
  }

  /**
   * Checks the webhook URL of a settings object a user sent and returns it normalised; an empty
   * string or null stays null (it removes the URL). Throws a 400 naming the reason.
   */
  async checkWebhookUrl(webhookUrl: string | null | undefined): Promise<string | null | undefined> {
    if (webhookUrl === undefined) return undefined;
    if (webhookUrl === null || webhookUrl === '') return null;
    return checkWebhookUrl(webhookUrl, this.deps.policy, this.deps.resolveAll ?? systemResolveAll);
  }

  /** One page of the node's deliveries, newest first, and the cursor of the next (null after the last). */
  async listDeliveries(userId: string, nodeId: string, limit: number, cursor?: string) {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    let beforeId: number | undefined;
    if (cursor !== undefined) {
      const after = await findNodeDelivery(this.deps.db, nodeId, decodeCursor('delivery', cursor, /^dlv_[0-9a-f]{32}$/));
      if (!after) throw staleCursor();
      beforeId = after.id;
    }
    const rows = await listNodeDeliveries(this.deps.db, nodeId, limit + 1, beforeId);
    const page = pageOf(rows, limit, (last) => encodeCursor('delivery', last.delivery.delivery_id));
    return { data: page.items.map(({ delivery, attempts }) => presentDelivery(delivery, attempts)), nextCursor: page.nextCursor };
  }

  /** Sends an event again as a new delivery (same webhook-id) to the node's current URL. */
  async redeliver(userId: string, nodeId: string, deliveryId: string): Promise<string> {
    return this.deps.db.transaction(async (tx) => {
      const node = await lockUserNode(tx, userId, nodeId);
      if (!node) throw nodeNotFound(nodeId);
      const original = await findNodeDelivery(tx, nodeId, deliveryId);
      if (!original) throw new AppError('delivery_not_found', `delivery ${deliveryId} of node ${nodeId} was not found`);
      if (original.state === 'pending' || original.state === 'delivering') {
        throw new AppError('invalid_state', `delivery ${deliveryId} is still ${original.state}; redeliver it once it has finished`, { state: original.state });
      }
      const url = node.settings.webhookUrl;
      if (!url) throw notConfigured(nodeId);
      return insertRedelivery(tx, original, nodeId, url);
    });
  }

  /** Records a TEST event; it is delivered like any other, in order with the node's events. */
  async sendTestEvent(userId: string, nodeId: string): Promise<string> {
    return this.deps.db.transaction(async (tx) => {
      const node = await lockUserNode(tx, userId, nodeId);
      if (!node) throw nodeNotFound(nodeId);
      if (!node.settings.webhookUrl) throw notConfigured(nodeId);
      const event = await recordNodeEvent(tx, node, 'TEST', { message: 'a test event sent from the API' });
      return event.eventId;
    });
  }
}

const notConfigured = (nodeId: string) =>
  new AppError('webhook_not_configured', `node ${nodeId} has no webhook URL; set one with POST /api/nodes/${nodeId}/settings`);

function presentDelivery(d: DeliveryRow, attempts: AttemptRow[]) {
  const iso = (t: Date | string | null) => (t === null ? null : new Date(t).toISOString());
  return {
    deliveryId: d.delivery_id,
    eventId: d.event_id,
    eventType: d.event_type,
    event: typeof d.payload === 'string' ? JSON.parse(d.payload) : d.payload,
    url: d.url,
    state: d.state,
    nextAttemptAt: d.state === 'pending' ? iso(d.next_attempt_at) : null,
    lastError: d.last_error,
    redeliveryOf: d.redelivery_of,
    createdAt: iso(d.created_at)!,
    finishedAt: iso(d.finished_at),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      url: a.url,
      startedAt: iso(a.started_at)!,
      durationMs: a.duration_ms,
      statusCode: a.status_code,
      remoteAddress: a.remote_address,
      error: a.error,
    })),
  };
}

export type ApiDelivery = ReturnType<typeof presentDelivery>;
