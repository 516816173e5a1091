// What the service knows of a node's continuous state (issue #43, point 4): its VSS store's facts,
// read from the rows (the last write and the bytes held now, never stale), and the daemon's pending
// writes as last sampled (migration 0042).
import type { Queryable } from './database.ts';
import { VSS_FENCE_KEY } from './vss.ts';

export interface VssStoreFacts {
  /** A signed write bound a key to the store: the daemon has written to it. */
  bound: boolean;
  /** The last state write (the fence aside: it is written at unlock, not by a state change); null before any. */
  lastWriteAt: Date | null;
  /** Bytes of values held now, and how many keys. */
  bytes: number;
  keys: number;
}

/** The node's store's facts; undefined when the node has no store yet (no URL issued). */
export async function readVssStoreFacts(db: Queryable, nodeId: string): Promise<VssStoreFacts | undefined> {
  const [row] = await db.query<{ bound: boolean; last_write_at: Date | null; bytes: number; keys: number }>(
    `SELECT s.pubkey IS NOT NULL AS bound, max(o.updated_at) FILTER (WHERE o.key <> $2) AS last_write_at,
            coalesce(sum(o.bytes), 0)::float8 AS bytes, count(o.key)::int AS keys
       FROM vss_stores s LEFT JOIN vss_objects o ON o.node_id = s.node_id
      WHERE s.node_id = $1 GROUP BY s.node_id, s.pubkey`,
    [nodeId, VSS_FENCE_KEY],
  );
  if (!row) return undefined;
  return { bound: row.bound, lastWriteAt: row.last_write_at === null ? null : new Date(row.last_write_at), bytes: row.bytes, keys: row.keys };
}

export async function recordVssPendingWrites(db: Queryable, nodeId: string, pendingWrites: number): Promise<void> {
  await db.query(
    `INSERT INTO vss_pending_samples (node_id, pending_writes) VALUES ($1, $2)
     ON CONFLICT (node_id) DO UPDATE SET pending_writes = EXCLUDED.pending_writes, sampled_at = now()`,
    [nodeId, pendingWrites],
  );
}

/** Forgets a node's sample (its daemon stopped, or writes no longer to VSS): it no longer counts. */
export async function forgetVssPendingWrites(db: Queryable, nodeId: string): Promise<void> {
  await db.query('DELETE FROM vss_pending_samples WHERE node_id = $1', [nodeId]);
}

/**
 * Running nodes whose daemon had more than `above` pending writes when last sampled, less than
 * `maxAgeMs` ago (an older sample is of a daemon no longer asked: stopped, locked, unreachable).
 */
export async function countNodesWithVssPendingWrites(db: Queryable, above: number, maxAgeMs: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM vss_pending_samples p JOIN nodes n ON n.id = p.node_id
      WHERE n.status = 'RUNNING' AND p.pending_writes > $1 AND p.sampled_at > now() - make_interval(secs => $2)`,
    [above, maxAgeMs / 1000],
  );
  return row!.n;
}
