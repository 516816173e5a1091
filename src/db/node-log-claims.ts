// Per-node claims on collecting a node's log (see migration 0023): one replica follows a node's
// pod log at a time. The database's clock decides expiry, the one every replica shares.
import type { Queryable } from './database.ts';

export interface NodeLogClaim {
  nodeId: string;
  /** The kubelet's time of the last stored line (nine fraction digits), where the holder resumes. */
  collectedThrough: string | null;
}

interface ClaimRow {
  node_id: string;
  collected_through: string | null;
}

const toClaim = (r: ClaimRow): NodeLogClaim => ({ nodeId: r.node_id, collectedThrough: r.collected_through });

/**
 * Renews every claim `holder` still has; answers them (a claim another replica took is missing).
 * The claim of a node now destroyed is let go instead: its pod is gone, and so is its output.
 */
export async function renewNodeLogClaims(db: Queryable, holder: string, ttlMs: number): Promise<NodeLogClaim[]> {
  await db.query(
    `UPDATE node_log_claims c SET holder = NULL, expires_at = now()
     FROM nodes n WHERE n.id = c.node_id AND c.holder = $1 AND n.status = 'DESTROYED'`,
    [holder],
  );
  const rows = await db.query<ClaimRow>(
    `UPDATE node_log_claims SET expires_at = now() + make_interval(secs => $2)
     WHERE holder = $1 AND expires_at > now()
     RETURNING node_id, collected_through`,
    [holder, ttlMs / 1000],
  );
  return rows.map(toClaim);
}

/**
 * Takes up to `limit` claims nobody holds (released, expired, or of a node seen for the first
 * time) and nobody held for `unheldForMs` at least, oldest node first. A node being destroyed is
 * still followed (its daemon's last lines); a destroyed one has nothing left to collect.
 */
export async function takeNodeLogClaims(db: Queryable, holder: string, ttlMs: number, limit: number, unheldForMs = 0): Promise<NodeLogClaim[]> {
  if (limit <= 0) return [];
  await db.query(
    `INSERT INTO node_log_claims (node_id)
     SELECT n.id FROM nodes n
     WHERE n.status <> 'DESTROYED' AND NOT EXISTS (SELECT 1 FROM node_log_claims c WHERE c.node_id = n.id)
     ON CONFLICT (node_id) DO NOTHING`,
  );
  const rows = await db.query<ClaimRow>(
    `UPDATE node_log_claims SET holder = $1, expires_at = now() + make_interval(secs => $2)
     WHERE node_id IN (
       SELECT c.node_id FROM node_log_claims c JOIN nodes n ON n.id = c.node_id
       WHERE (c.holder IS NULL OR c.expires_at <= now()) AND c.expires_at <= now() - make_interval(secs => $4) AND n.status <> 'DESTROYED'
       ORDER BY n.created_at, n.id LIMIT $3
       FOR UPDATE OF c SKIP LOCKED)
     RETURNING node_id, collected_through`,
    [holder, ttlMs / 1000, limit, unheldForMs / 1000],
  );
  return rows.map(toClaim);
}

/** Hands a claim back so another replica takes it at once; a no-op unless `holder` has it. */
export async function releaseNodeLogClaim(db: Queryable, nodeId: string, holder: string): Promise<void> {
  await db.query('UPDATE node_log_claims SET holder = NULL, expires_at = now() WHERE node_id = $1 AND holder = $2', [nodeId, holder]);
}

/**
 * How many nodes there are to collect, and the replicas collecting now with how many claims each:
 * holders of live claims, replicas present through their `node-log-collector:<holder>` lease while
 * holding none, and `holder` itself.
 */
export async function nodeLogCollectionShares(db: Queryable, holder: string): Promise<{ nodes: number; held: Map<string, number> }> {
  const [{ nodes }] = (await db.query<{ nodes: string | number }>(`SELECT count(*) AS nodes FROM nodes WHERE status <> 'DESTROYED'`)) as [{ nodes: string | number }];
  const rows = await db.query<{ holder: string; claims: string | number }>(
    `SELECT h.holder, (SELECT count(*) FROM node_log_claims c WHERE c.holder = h.holder AND c.expires_at > now()) AS claims
     FROM (SELECT holder FROM node_log_claims WHERE holder IS NOT NULL AND expires_at > now()
           UNION SELECT holder FROM leases WHERE name LIKE 'node-log-collector:%' AND expires_at > now()
           UNION SELECT $1::text) h`,
    [holder],
  );
  return { nodes: Number(nodes), held: new Map(rows.map((r) => [r.holder, Number(r.claims)])) };
}

/**
 * Moves the claim's resume point, only while `holder` still has the claim (checked and locked in
 * the caller's transaction, with the segment's record): false when another replica took it over.
 */
export async function advanceNodeLogClaim(db: Queryable, nodeId: string, holder: string, collectedThrough: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE node_log_claims SET collected_through = $3
     WHERE node_id = $1 AND holder = $2 AND expires_at > now()
     RETURNING node_id`,
    [nodeId, holder, collectedThrough],
  );
  return rows.length === 1;
}

/** Every claim released: embedded PGlite has one process, so any claim held at its start is a crashed run's. */
export async function releaseAllNodeLogClaims(db: Queryable): Promise<void> {
  await db.query('UPDATE node_log_claims SET holder = NULL, expires_at = now() WHERE holder IS NOT NULL');
}
