// Webhook deliveries and their attempts. Events become deliveries here (fan-out), workers claim the
// oldest unfinished delivery of each node (so one node's events arrive in order), and every attempt
// is recorded with its outcome.
import type { Database, Queryable } from './database.ts';
import { lockNode, updateNode } from './nodes.ts';

const FAN_OUT_LOCK_KEY = 727_003; // arbitrary, constant: "rln-cloud webhook fan-out" among advisory locks

export type DeliveryState = 'pending' | 'delivering' | 'succeeded' | 'failed' | 'cancelled';

export interface ClaimedDelivery {
  id: number;
  deliveryId: string;
  nodeId: string;
  /** Attempts made so far, the one about to start included. */
  attempts: number;
  leaseToken: string;
  /** The node_events id (the webhook-id header). */
  eventId: string;
  payload: Record<string, unknown>;
  /** The node's webhook URL now; null when it was removed since the event. */
  targetUrl: string | null;
}

/**
 * Turns up to `limit` new events into deliveries to their node's webhook URL (events of nodes
 * without one are only marked). One replica at a time, so delivery ids follow event order.
 * Returns how many events it looked at: `limit` means there may be more.
 */
export async function fanOutNodeEvents(db: Database, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [FAN_OUT_LOCK_KEY]);
    if (!lock?.ok) return 0;
    const [row] = await tx.query<{ events: number }>(
      `WITH picked AS (
         SELECT id FROM node_events WHERE webhook_fanned_out_at IS NULL ORDER BY id LIMIT $1
       ), marked AS (
         UPDATE node_events e SET webhook_fanned_out_at = now() FROM picked WHERE e.id = picked.id
         RETURNING e.id, e.node_id
       ), inserted AS (
         INSERT INTO webhook_deliveries (event_id, node_id, url)
         SELECT m.id, m.node_id, n.settings->>'webhookUrl' FROM marked m JOIN nodes n ON n.id = m.node_id
         WHERE coalesce(n.settings->>'webhookUrl', '') <> ''
         ORDER BY m.id
         RETURNING id
       )
       SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM inserted)::int AS deliveries`,
      [limit],
    );
    return Number(row?.events ?? 0);
  });
}

/** Claims due deliveries that are the oldest unfinished one of their node, under a lease. */
export async function claimDeliveries(db: Queryable, limit: number, leaseMs: number, leaseToken: string): Promise<ClaimedDelivery[]> {
  const rows = await db.query<{
    id: string | number;
    delivery_id: string;
    node_id: string;
    attempts: number;
    event_id: string;
    payload: Record<string, unknown> | string;
    target_url: string | null;
  }>(
    `WITH claimed AS (
       UPDATE webhook_deliveries d
       SET state = 'delivering', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $2), lease_token = $3
       WHERE d.id IN (
         SELECT c.id FROM webhook_deliveries c
         WHERE c.state IN ('pending', 'delivering') AND c.next_attempt_at <= now()
           AND (c.state = 'pending' OR c.lease_until < now())
           AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries p
             WHERE p.node_id = c.node_id AND p.id < c.id AND p.state IN ('pending', 'delivering'))
         ORDER BY c.next_attempt_at, c.id LIMIT $1
         FOR UPDATE SKIP LOCKED)
       RETURNING d.id, d.delivery_id, d.node_id, d.attempts, d.event_id)
     SELECT c.id, c.delivery_id, c.node_id, c.attempts, e.event_id, e.payload,
            nullif(n.settings->>'webhookUrl', '') AS target_url
     FROM claimed c JOIN node_events e ON e.id = c.event_id JOIN nodes n ON n.id = c.node_id
     ORDER BY c.id`,
    [limit, leaseMs / 1000, leaseToken],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    deliveryId: r.delivery_id,
    nodeId: r.node_id,
    attempts: r.attempts,
    leaseToken,
    eventId: r.event_id,
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    targetUrl: r.target_url,
  }));
}

export interface AttemptRecord {
  url: string;
  startedAt: Date;
  durationMs: number;
  statusCode?: number;
  remoteAddress?: string;
  error?: string;
}

export type Settlement =
  | { state: 'succeeded' }
  | { state: 'pending'; retryInMs: number; error: string }
  | { state: 'failed'; error: string }
  /** The receiver answered 410: stop sending to that URL. */
  | { state: 'gone'; error: string };

/**
 * Records the attempt and moves the delivery on, atomically (one statement: this runs once per
 * delivery, so it is kept to one round trip). Does nothing to the delivery (but still records the
 * attempt) when the lease was lost to another worker meanwhile.
 */
export async function settleDelivery(db: Database, d: ClaimedDelivery, attempt: AttemptRecord, outcome: Settlement) {
  const settle = async (q: Queryable) => {
    const state = outcome.state === 'gone' ? 'failed' : outcome.state;
    const error = outcome.state === 'succeeded' ? null : outcome.error;
    const retryInS = outcome.state === 'pending' ? outcome.retryInMs / 1000 : 0;
    const [row] = await q.query<{ updated: number }>(
      `WITH updated AS (
         UPDATE webhook_deliveries SET state = $3, last_error = $4, lease_until = NULL, lease_token = NULL,
           next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + make_interval(secs => $5) ELSE next_attempt_at END,
           finished_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
         WHERE id = $1 AND lease_token = $2 RETURNING id
       ), attempt AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, url, started_at, duration_ms, status_code, remote_address, error)
         VALUES ($1, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING RETURNING 1
       )
       SELECT (SELECT count(*) FROM updated)::int AS updated`,
      [d.id, d.leaseToken, state, error, retryInS, d.attempts, attempt.url, attempt.startedAt, attempt.durationMs,
        attempt.statusCode ?? null, attempt.remoteAddress ?? null, attempt.error ?? null],
    );
    return (row?.updated ?? 0) > 0;
  };
  if (outcome.state !== 'gone') return void (await settle(db));
  await db.transaction(async (tx) => {
    if (await settle(tx)) await stopSendingTo(tx, d.nodeId, attempt.url);
  });
}

/** After a 410: the node's webhook URL is removed (if still that one) and its pending deliveries cancelled. */
async function stopSendingTo(tx: Queryable, nodeId: string, url: string) {
  const node = await lockNode(tx, nodeId);
  if (!node || node.settings.webhookUrl !== url) return;
  const { webhookUrl: _removed, ...rest } = node.settings;
  await updateNode(tx, nodeId, { settings: rest });
  await tx.query(
    `UPDATE webhook_deliveries SET state = 'cancelled', finished_at = now(),
       last_error = 'the receiver answered 410 Gone to an earlier delivery; the webhook URL was removed'
     WHERE node_id = $1 AND state = 'pending'`,
    [nodeId],
  );
}

/** The node has no webhook URL any more: the claimed delivery ends without an attempt. */
export async function cancelDelivery(db: Queryable, d: ClaimedDelivery, reason: string) {
  await db.query(
    `UPDATE webhook_deliveries SET state = 'cancelled', last_error = $3, finished_at = now(), lease_until = NULL, lease_token = NULL,
       attempts = attempts - 1
     WHERE id = $1 AND lease_token = $2`,
    [d.id, d.leaseToken, reason],
  );
}

/** Only safe when this process is the database's only worker (embedded PGlite), like releaseAllLeases. */
export async function releaseDeliveryLeases(db: Queryable) {
  await db.query(`UPDATE webhook_deliveries SET lease_until = now() WHERE state = 'delivering'`);
}

export interface DeliveryRow {
  id: number;
  delivery_id: string;
  event_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  url: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  redelivery_of: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface AttemptRow {
  delivery_id: number;
  attempt: number;
  url: string;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  remote_address: string | null;
  error: string | null;
}

const DELIVERY_COLUMNS = `d.id, d.delivery_id, e.event_id, e.event_type, e.payload, d.url, d.state, d.attempts,
  d.next_attempt_at, d.last_error, o.delivery_id AS redelivery_of, d.created_at, d.finished_at`;
const DELIVERY_FROM = `webhook_deliveries d JOIN node_events e ON e.id = d.event_id LEFT JOIN webhook_deliveries o ON o.id = d.redelivery_of`;

/** A node's most recent deliveries, newest first, with their attempts in order. */
export async function listNodeDeliveries(db: Queryable, nodeId: string, limit: number) {
  const deliveries = (
    await db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.node_id = $1 ORDER BY d.id DESC LIMIT $2`, [nodeId, limit])
  ).map((d) => ({ ...d, id: Number(d.id) }));
  const attempts = deliveries.length
    ? await db.query<AttemptRow>(
        `SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY delivery_id, attempt`,
        [deliveries.map((d) => d.id)],
      )
    : [];
  const byDelivery = new Map<number, AttemptRow[]>();
  for (const a of attempts) {
    const key = Number(a.delivery_id);
    byDelivery.set(key, [...(byDelivery.get(key) ?? []), a]);
  }
  return deliveries.map((d) => ({ delivery: d, attempts: byDelivery.get(d.id) ?? [] }));
}

export async function findNodeDelivery(db: Queryable, nodeId: string, deliveryId: string) {
  const row = (
    await db.query<DeliveryRow & { event_row_id: string | number }>(
      `SELECT ${DELIVERY_COLUMNS}, d.event_id AS event_row_id FROM ${DELIVERY_FROM} WHERE d.node_id = $1 AND d.delivery_id = $2`,
      [nodeId, deliveryId],
    )
  )[0];
  return row && { ...row, id: Number(row.id), event_row_id: Number(row.event_row_id) };
}

/** A new delivery of an already delivered (or failed) event; it queues behind the node's others. */
export async function insertRedelivery(db: Queryable, original: { id: number; event_row_id: number }, nodeId: string, url: string) {
  const [row] = await db.query<{ delivery_id: string }>(
    `INSERT INTO webhook_deliveries (event_id, node_id, url, redelivery_of) VALUES ($1, $2, $3, $4) RETURNING delivery_id`,
    [original.event_row_id, nodeId, url, original.id],
  );
  return row!.delivery_id;
}
