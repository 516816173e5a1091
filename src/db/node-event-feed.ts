// Reading node events back in a commit-safe order: a node's timeline, one user's events since a
// position (a stream resuming) and every user's new events (the stream's shared poller).
//
// A position is (tx_id, id): the recording transaction, then the row. Every read stops below the
// oldest transaction still running (pg_snapshot_xmin of the reader's snapshot), so an event is
// only read once every event before it in this order has committed or rolled back: a reader that
// remembers the last position it read never misses one that commits later (see 0012).
import type { Queryable } from './database.ts';

export interface EventPosition {
  /** The recording transaction (xid8, as decimal text). */
  tx: string;
  id: number;
}

export interface FeedEventRow {
  position: EventPosition;
  eventId: string;
  nodeId: string;
  userId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

interface RawRow {
  id: string | number;
  tx_text: string;
  event_id: string;
  node_id: string;
  user_id: string;
  event_type: string;
  payload: Record<string, unknown> | string;
}

// The transaction id goes out as text under another name: an output column named tx_id would be
// what ORDER BY tx_id sorts by, as text.
const COLUMNS = 'id, tx_id::text AS tx_text, event_id, node_id, user_id, event_type, payload';
// Only events whose transaction, and every transaction before it, has ended.
const SETTLED = 'tx_id < pg_snapshot_xmin(pg_current_snapshot())';

const toRow = (r: RawRow): FeedEventRow => ({
  position: { tx: r.tx_text, id: Number(r.id) },
  eventId: r.event_id,
  nodeId: r.node_id,
  userId: r.user_id,
  eventType: r.event_type,
  payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
});

/** The position of the last settled event (of anybody), or null when there is none. */
export async function lastSettledPosition(db: Queryable): Promise<EventPosition | null> {
  const [row] = await db.query<{ id: string | number; tx_text: string }>(
    `SELECT id, tx_id::text AS tx_text FROM node_events WHERE ${SETTLED} ORDER BY tx_id DESC, id DESC LIMIT 1`,
  );
  return row ? { tx: row.tx_text, id: Number(row.id) } : null;
}

export interface SettledRead {
  rows: FeedEventRow[];
  /**
   * Some event has committed but is not settled yet: a transaction that began before it is still
   * running. It is read once that one ends, which may signal nothing: look again soon.
   */
  heldBack: boolean;
}

/** Every user's settled events after `after` (all of them when null), oldest first. */
export async function readSettledEvents(db: Queryable, after: EventPosition | null, limit: number): Promise<SettledRead> {
  // One statement, one snapshot: the horizon is the same for both halves. The left join keeps the
  // flag's row when no event is settled.
  const rows = await db.query<Partial<RawRow> & { held_back: boolean }>(
    `SELECT h.held_back, e.* FROM (
       SELECT EXISTS (SELECT 1 FROM node_events WHERE tx_id >= pg_snapshot_xmin(pg_current_snapshot())) AS held_back
     ) h LEFT JOIN LATERAL (
       SELECT ${COLUMNS} FROM node_events
       WHERE (tx_id, id) > ($1::xid8, $2::bigint) AND ${SETTLED}
       ORDER BY tx_id, id LIMIT $3
     ) e ON true`,
    [after?.tx ?? '0', after?.id ?? 0, limit],
  );
  return { rows: rows.filter((r) => r.id !== null && r.id !== undefined).map((r) => toRow(r as RawRow)), heldBack: rows[0]?.held_back === true };
}

/** One user's events after `after` up to `upTo` included (a position already read), oldest first. */
export async function readUserEventsBetween(
  db: Queryable,
  userId: string,
  after: EventPosition,
  upTo: EventPosition,
  limit: number,
): Promise<FeedEventRow[]> {
  const rows = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM node_events
     WHERE user_id = $1 AND (tx_id, id) > ($2::xid8, $3::bigint) AND (tx_id, id) <= ($4::xid8, $5::bigint)
     ORDER BY tx_id, id LIMIT $6`,
    [userId, after.tx, after.id, upTo.tx, upTo.id, limit],
  );
  return rows.map(toRow);
}

/**
 * One node's settled events after `after` in the order asked: oldest first from the start (null),
 * or newest first from the latest, going back past `after`.
 */
export async function readNodeEvents(
  db: Queryable,
  nodeId: string,
  after: EventPosition | null,
  order: 'oldest' | 'newest',
  limit: number,
): Promise<FeedEventRow[]> {
  const [compare, direction] = order === 'oldest' ? ['>', 'ASC'] : ['<', 'DESC'];
  const from = after ? `AND (tx_id, id) ${compare} ($3::xid8, $4::bigint)` : '';
  const rows = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM node_events
     WHERE node_id = $1 ${from} AND ${SETTLED}
     ORDER BY tx_id ${direction}, id ${direction} LIMIT $2`,
    after ? [nodeId, limit, after.tx, after.id] : [nodeId, limit],
  );
  return rows.map(toRow);
}

/**
 * Whether `position` is one of the user's events (of `nodeId`, when given): a cursor names an
 * event its holder may read, or it is refused.
 */
export async function isUserEventPosition(db: Queryable, userId: string, position: EventPosition, nodeId?: string): Promise<boolean> {
  const rows = await db.query<{ id: string | number }>(
    `SELECT id FROM node_events
     WHERE id = $1 AND tx_id = $2::xid8 AND user_id = $3 AND ($4::text IS NULL OR node_id = $4)`,
    [position.id, position.tx, userId, nodeId ?? null],
  );
  return rows.length > 0;
}
