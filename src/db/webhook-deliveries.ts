// Webhook deliveries and their attempts. Events become deliveries here (fan-out), workers claim the
// oldest unfinished delivery of each node (so one node's events arrive in order), and every attempt
// is recorded with its outcome.
import { preparedStatement, type Database, type Queryable } from './database.ts';

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

// Takes the oldest queued events (a trigger queues every new event: migration 0016) and makes a
// delivery of each to its node's webhook URL, if it has one.
const FAN_OUT_SQL = preparedStatement(
  'webhook_fan_out',
  `WITH picked AS (
     DELETE FROM webhook_fan_out_queue q
     USING (SELECT event_id FROM webhook_fan_out_queue ORDER BY event_id LIMIT $1) oldest
     WHERE q.event_id = oldest.event_id
     RETURNING q.event_id
   ), inserted AS (
     INSERT INTO webhook_deliveries (event_id, node_id, url)
     SELECT e.id, e.node_id, n.settings->>'webhookUrl' FROM picked p JOIN node_events e ON e.id = p.event_id JOIN nodes n ON n.id = e.node_id
     WHERE coalesce(n.settings->>'webhookUrl', '') <> ''
     ORDER BY e.id
     RETURNING id
   )
   SELECT (SELECT count(*) FROM picked)::int AS events, (SELECT count(*) FROM inserted)::int AS deliveries`,
);

/**
 * Turns up to `limit` new events into deliveries to their node's webhook URL (events of nodes
 * without one only leave the queue). One replica at a time, so delivery ids follow event order.
 * Returns how many events it looked at: `limit` means there may be more.
 */
export async function fanOutNodeEvents(db: Database, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [FAN_OUT_LOCK_KEY]);
    if (!lock?.ok) return 0;
    const [row] = await tx.query<{ events: number }>(
      FAN_OUT_SQL,
      [limit],
    );
    return Number(row?.events ?? 0);
  });
}

// The columns a claim hands to the dispatcher, from a claimed row `c` (the claim and the settle
// that claims successors return the same shape).
const CLAIMED_COLUMNS = `c.id, c.delivery_id, c.node_id, c.attempts, e.event_id, e.payload,
   nullif(n.settings->>'webhookUrl', '') AS target_url
   FROM claimed c JOIN node_events e ON e.id = c.event_id JOIN nodes n ON n.id = c.node_id`;

/**
 * The `claimed` CTE: takes the rows whose ids the CTE `locked` holds (already locked by it), under
 * a lease of `leaseSeconds` and `leaseToken` (parameter placeholders). Each is checked again on
 * the locked row: another worker may have claimed or settled it since the statement's snapshot.
 * (Written as a CASE so the planner looks rows up by id.)
 */
function claimLockedRows(locked: string, leaseSeconds: string, leaseToken: string) {
  return `claimed AS (
     UPDATE webhook_deliveries d
     SET state = 'delivering', attempts = d.attempts + 1, lease_until = now() + make_interval(secs => ${leaseSeconds}), lease_token = ${leaseToken}
     WHERE d.id = ANY (ARRAY(SELECT id FROM ${locked}))
       AND CASE d.state WHEN 'pending' THEN d.next_attempt_at <= now()
                        WHEN 'delivering' THEN d.next_attempt_at <= now() AND d.lease_until < now()
                        ELSE false END
     RETURNING d.id, d.delivery_id, d.node_id, d.attempts, d.event_id)`;
}

const CLAIM_SQL = preparedStatement(
  'webhook_claim',
  `WITH RECURSIVE heads AS (
     (SELECT u.node_id, u.id, u.state, u.next_attempt_at, u.lease_until FROM webhook_deliveries u
      WHERE u.finished_at IS NULL ORDER BY u.node_id, u.id LIMIT 1)
     UNION ALL
     SELECT nxt.* FROM heads h CROSS JOIN LATERAL (
       SELECT u.node_id, u.id, u.state, u.next_attempt_at, u.lease_until FROM webhook_deliveries u
       WHERE u.finished_at IS NULL AND u.node_id > h.node_id
       ORDER BY u.node_id, u.id LIMIT 1) nxt
   ), due AS (
     SELECT locked.id FROM (
       SELECT id FROM heads WHERE next_attempt_at <= now() AND (state = 'pending' OR lease_until < now())
       ORDER BY next_attempt_at, id LIMIT $1
     ) h CROSS JOIN LATERAL (SELECT c.id FROM webhook_deliveries c WHERE c.id = h.id FOR UPDATE SKIP LOCKED) locked
   ), ${claimLockedRows('due', '$2', '$3')}
   SELECT ${CLAIMED_COLUMNS}
   ORDER BY c.id`,
);

/**
 * Claims up to `limit` due deliveries, each the oldest unfinished one of its node, under a lease.
 * The heads of the nodes' queues are found by skipping from node to node along the index of
 * unfinished deliveries (one probe per node with unfinished work), so the cost follows the number
 * of such nodes, not the backlog behind them: a node whose receiver is down with 100,000 events
 * queued costs one probe, not 100,000 "is there an older one" checks.
 */
export async function claimDeliveries(db: Queryable, limit: number, leaseMs: number, leaseToken: string): Promise<ClaimedDelivery[]> {
  const rows = await db.query<ClaimedRow>(CLAIM_SQL, [limit, leaseMs / 1000, leaseToken]);
  return rows.map((r) => claimedDelivery(r, leaseToken));
}

interface ClaimedRow {
  id: string | number;
  delivery_id: string;
  node_id: string;
  attempts: number;
  event_id: string;
  payload: Record<string, unknown> | string;
  target_url: string | null;
}

function claimedDelivery(r: ClaimedRow, leaseToken: string): ClaimedDelivery {
  return {
    id: Number(r.id),
    deliveryId: r.delivery_id,
    nodeId: r.node_id,
    attempts: r.attempts,
    leaseToken,
    eventId: r.event_id,
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    targetUrl: r.target_url,
  };
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

export interface SettleItem {
  delivery: ClaimedDelivery;
  attempt: AttemptRecord;
  outcome: Exclude<Settlement, { state: 'gone' }>;
  /** Once this delivery has finished (not when it waits for a retry), claim its node's next one. */
  claimNext?: boolean;
}

const SETTLE_SQL = preparedStatement(
  'webhook_settle',
  `WITH input AS (
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::int[], $7::text[],
                          $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[], $13::bool[])
       AS i(id, lease_token, state, last_error, retry_s, attempt, url, started_at, duration_ms, status_code, remote_address, error, claim_next)
   ), updated AS (
     UPDATE webhook_deliveries d SET state = i.state, last_error = i.last_error, lease_until = NULL, lease_token = NULL,
       next_attempt_at = CASE WHEN i.state = 'pending' THEN now() + make_interval(secs => i.retry_s) ELSE d.next_attempt_at END,
       finished_at = CASE WHEN i.state = 'pending' THEN NULL ELSE now() END
     FROM input i WHERE d.id = i.id AND d.lease_token = i.lease_token
     RETURNING d.id, d.node_id, i.state <> 'pending' AND i.claim_next AS claim_next
   ), attempt AS (
     INSERT INTO webhook_attempts (delivery_id, attempt, url, started_at, duration_ms, status_code, remote_address, error)
     SELECT id, attempt, url, started_at, duration_ms, status_code, remote_address, error FROM input
     ON CONFLICT DO NOTHING RETURNING 1
   ), successor AS (
     -- The node's next unfinished delivery, if it is due now and nobody holds it. The finished one
     -- was its node's oldest (it was claimed as such), so the next by id is the new oldest. This
     -- statement's snapshot still shows the finished one unfinished: hence id > u.id.
     SELECT locked.id FROM updated u CROSS JOIN LATERAL (
       SELECT s.id FROM webhook_deliveries s
       WHERE s.node_id = u.node_id AND s.finished_at IS NULL AND s.id > u.id ORDER BY s.id LIMIT 1
     ) nx CROSS JOIN LATERAL (SELECT c.id FROM webhook_deliveries c WHERE c.id = nx.id FOR UPDATE SKIP LOCKED) locked
     WHERE u.claim_next
   ), ${claimLockedRows('successor', '$14', '$15')}
   SELECT id, NULL AS delivery_id, NULL AS node_id, NULL::int AS attempts, NULL AS event_id, NULL::jsonb AS payload, NULL AS target_url
   FROM updated
   UNION ALL
   SELECT ${CLAIMED_COLUMNS}`,
);

export interface SettleOptions {
  /** The lease of the successors claimed (see SettleItem.claimNext). */
  leaseMs: number;
  leaseToken: string;
}

/**
 * Records the attempts and moves their deliveries on, all in one statement (one round trip and one
 * commit for a whole batch of outcomes: the dispatcher coalesces the attempts that finish while
 * the previous batch is being written). A delivery whose lease was lost to another worker meanwhile
 * is left alone, but its attempt is still recorded. Returns the ids of the deliveries moved on.
 */
export async function settleDeliveries(db: Queryable, items: SettleItem[]): Promise<Set<number>> {
  return (await settleAndClaimSuccessors(db, items, { leaseMs: 0, leaseToken: '' })).settled;
}

/**
 * settleDeliveries, and in the same statement claims the next delivery of each node whose item
 * asks for it (`claimNext`) and whose delivery finished: the node's queue moves on without waiting
 * for the next claim to find it. Successors are claimed only when due and free, as a claim would.
 */
export async function settleAndClaimSuccessors(
  db: Queryable,
  items: SettleItem[],
  lease: SettleOptions,
): Promise<{ settled: Set<number>; claimed: ClaimedDelivery[] }> {
  if (items.length === 0) return { settled: new Set(), claimed: [] };
  const rows = await db.query<ClaimedRow>(
    SETTLE_SQL,
    [
      items.map((x) => x.delivery.id),
      items.map((x) => x.delivery.leaseToken),
      items.map((x) => x.outcome.state),
      items.map((x) => (x.outcome.state === 'succeeded' ? null : x.outcome.error)),
      items.map((x) => (x.outcome.state === 'pending' ? x.outcome.retryInMs / 1000 : 0)),
      items.map((x) => x.delivery.attempts),
      items.map((x) => x.attempt.url),
      items.map((x) => x.attempt.startedAt.toISOString()),
      items.map((x) => x.attempt.durationMs),
      items.map((x) => x.attempt.statusCode ?? null),
      items.map((x) => x.attempt.remoteAddress ?? null),
      items.map((x) => x.attempt.error ?? null),
      items.map((x) => x.claimNext === true),
      lease.leaseMs / 1000,
      lease.leaseToken,
    ],
  );
  const settled = new Set<number>();
  const claimed: ClaimedDelivery[] = [];
  for (const r of rows) {
    if (r.delivery_id === null) settled.add(Number(r.id));
    else claimed.push(claimedDelivery(r, lease.leaseToken));
  }
  return { settled, claimed };
}

/** Cancels the node's deliveries that wait for an attempt (its receiver is gone). */
export async function cancelPendingDeliveries(tx: Queryable, nodeId: string, reason: string) {
  await tx.query(
    `UPDATE webhook_deliveries SET state = 'cancelled', finished_at = now(), last_error = $2
     WHERE node_id = $1 AND state = 'pending'`,
    [nodeId, reason],
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

/**
 * Gives back deliveries claimed ahead and never attempted (the dispatcher stopped before sending
 * them): due again at once for any worker, and their attempt count as before the claim.
 */
export async function releaseUnsentDeliveries(db: Queryable, deliveries: ClaimedDelivery[]) {
  await db.query(
    `UPDATE webhook_deliveries d SET state = 'pending', attempts = d.attempts - 1, lease_until = NULL, lease_token = NULL
     FROM unnest($1::bigint[], $2::text[]) AS u(id, lease_token)
     WHERE d.id = u.id AND d.lease_token = u.lease_token AND d.state = 'delivering'`,
    [deliveries.map((d) => d.id), deliveries.map((d) => d.leaseToken)],
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
/** A node's deliveries, newest first, at most `limit`, older than the delivery `beforeId` when given. */
export async function listNodeDeliveries(db: Queryable, nodeId: string, limit: number, beforeId?: number) {
  const deliveries = (
    await db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.node_id = $1 AND ($3::bigint IS NULL OR d.id < $3) ORDER BY d.id DESC LIMIT $2`,
      [nodeId, limit, beforeId ?? null],
    )
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

/**
 * Deliveries not finished yet, waiting (pending: due now or retrying later) or being sent
 * (delivering), for the metrics. Read through the partial index on unfinished rows.
 */
export async function countUnfinishedDeliveries(db: Queryable): Promise<{ pending: number; delivering: number }> {
  const rows = await db.query<{ state: string; n: number }>(
    `SELECT state, count(*)::int AS n FROM webhook_deliveries WHERE finished_at IS NULL GROUP BY state`,
  );
  const n = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
  return { pending: n('pending'), delivering: n('delivering') };
}
