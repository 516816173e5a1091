// The index of collected node output kept in the blob store (see migration 0023): an export reads
// a node's segments in `seq` order, the same on every replica.
import type { Queryable } from './database.ts';

export interface NodeLogSegment {
  nodeId: string;
  seq: number;
  blobKey: string;
  firstAt: Date;
  lastAt: Date;
  bytes: number;
  lines: number;
}

interface SegmentRow {
  node_id: string;
  seq: string | number;
  blob_key: string;
  first_at: Date;
  last_at: Date;
  bytes: string | number;
  lines: number;
}

const toSegment = (r: SegmentRow): NodeLogSegment => ({
  nodeId: r.node_id,
  seq: Number(r.seq),
  blobKey: r.blob_key,
  firstAt: r.first_at,
  lastAt: r.last_at,
  bytes: Number(r.bytes),
  lines: r.lines,
});

/** The next segment number of a node (the claim's holder is its only writer). */
export async function nextNodeLogSegmentSeq(db: Queryable, nodeId: string): Promise<number> {
  const [row] = await db.query<{ next: string | number }>('SELECT coalesce(max(seq), 0) + 1 AS next FROM node_log_segments WHERE node_id = $1', [nodeId]);
  return Number(row!.next);
}

export async function insertNodeLogSegment(db: Queryable, s: NodeLogSegment): Promise<void> {
  await db.query(
    `INSERT INTO node_log_segments (node_id, seq, blob_key, first_at, last_at, bytes, lines) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.nodeId, s.seq, s.blobKey, s.firstAt, s.lastAt, s.bytes, s.lines],
  );
}

/** A node's segments that may hold lines in [from, to), oldest first. */
export async function listNodeLogSegments(db: Queryable, nodeId: string, range: { from?: Date; to?: Date } = {}): Promise<NodeLogSegment[]> {
  const rows = await db.query<SegmentRow>(
    `SELECT * FROM node_log_segments
     WHERE node_id = $1 AND ($2::timestamptz IS NULL OR last_at >= $2) AND ($3::timestamptz IS NULL OR first_at < $3)
     ORDER BY seq`,
    [nodeId, range.from ?? null, range.to ?? null],
  );
  return rows.map(toSegment);
}

/**
 * Segments past a node's budget, newest kept: the oldest ones once the newer ones add up to
 * `keepBytes` (the per-node bound the exports promise, LOG_FILE_MAX_BYTES x (LOG_FILES_KEPT + 1)),
 * and every segment of a node destroyed or purged.
 */
export async function listExpiredNodeLogSegments(db: Queryable, keepBytes: number, limit = 500): Promise<NodeLogSegment[]> {
  const rows = await db.query<SegmentRow>(
    `SELECT s.* FROM (
       SELECT node_log_segments.*, sum(bytes) OVER (PARTITION BY node_id ORDER BY seq DESC) AS newer_bytes
       FROM node_log_segments) s
     LEFT JOIN nodes n ON n.id = s.node_id
     WHERE s.newer_bytes - s.bytes >= $1 OR n.id IS NULL OR n.status = 'DESTROYED'
     ORDER BY s.node_id, s.seq LIMIT $2`,
    [keepBytes, limit],
  );
  return rows.map(toSegment);
}

export async function deleteNodeLogSegment(db: Queryable, nodeId: string, seq: number): Promise<void> {
  await db.query('DELETE FROM node_log_segments WHERE node_id = $1 AND seq = $2', [nodeId, seq]);
}
