// Nodes: the record of what a user asked for (desired_state) and what is true now (status).
import type { Queryable } from './database.ts';
import { buildFromRow, type BuildRow } from './builds.ts';
import type { Build, DesiredState, Network, Node, NodeSettings, NodeStatus } from '../domain/nodes.ts';
import { jsonParam } from './storable-text.ts';
import { SLOT_STATUSES } from '../domain/node-status-meaning.ts';

/** The row as the database answers it; nothing outside db/ sees it (nodeFromRow maps it once). */
export interface NodeRow {
  id: string;
  user_id: string;
  name: string;
  network: Network;
  status: NodeStatus;
  desired_state: DesiredState;
  locked: boolean;
  initialized: boolean;
  image_version: string;
  settings: NodeSettings;
  rest_port: number | null;
  peer_port: number | null;
  peer_host: string | null;
  auto_unlock_sealed: string | null;
  continuous_state: boolean;
  superseded_by: string | null;
  created_at: Date;
  updated_at: Date;
  destroyed_at: Date | null;
  // bigint: a string from node-postgres, a number inside json_agg.
  storage_used_bytes: string | number | null;
  storage_capacity_bytes: string | number | null;
  storage_available_bytes: string | number | null;
  storage_measured_at: Date | null;
  vss_bytes: string | number | null;
  vss_measured_at: Date | null;
}

export function nodeFromRow(r: NodeRow): Node {
  return {
    id: r.id,
    userId: r.user_id,
    name: r.name,
    network: r.network,
    status: r.status,
    desiredState: r.desired_state,
    locked: r.locked,
    initialized: r.initialized,
    imageVersion: r.image_version,
    settings: r.settings,
    restPort: r.rest_port,
    peerPort: r.peer_port,
    peerHost: r.peer_host,
    autoUnlockSealed: r.auto_unlock_sealed,
    continuousState: r.continuous_state,
    supersededBy: r.superseded_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    destroyedAt: r.destroyed_at,
    storage:
      r.storage_measured_at === null || r.storage_measured_at === undefined
        ? null
        : {
            usedBytes: Number(r.storage_used_bytes),
            capacityBytes: Number(r.storage_capacity_bytes),
            availableBytes: Number(r.storage_available_bytes),
            measuredAt: r.storage_measured_at,
          },
    vss:
      r.vss_measured_at === null || r.vss_measured_at === undefined ? null : { usedBytes: Number(r.vss_bytes), measuredAt: r.vss_measured_at },
  };
}

/** The nodes a statement answered, as nodes. */
export async function queryNodes(db: Queryable, sql: string, params: unknown[] = []): Promise<Node[]> {
  return (await db.query<NodeRow>(sql, params)).map(nodeFromRow);
}

/** A new node; its status and desired state are the create rule's (nodes/lifecycle.ts), lock and init flags the columns' defaults unless given. */
export async function insertNode(
  db: Queryable,
  n: Pick<Node, 'id' | 'userId' | 'name' | 'network' | 'status' | 'desiredState' | 'imageVersion' | 'settings' | 'restPort' | 'peerPort'> &
    Partial<Pick<Node, 'locked' | 'initialized' | 'continuousState'>>,
) {
  return (
    await queryNodes(
      db,
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, locked, initialized, image_version, settings, rest_port, peer_port, continuous_state)
       VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, true), coalesce($8, false), $9, $10, $11, $12, coalesce($13, false)) RETURNING *`,
      [n.id, n.userId, n.name, n.network, n.status, n.desiredState, n.locked ?? null, n.initialized ?? null, n.imageVersion, jsonParam(n.settings), n.restPort, n.peerPort, n.continuousState ?? null],
    )
  )[0]!;
}

/** A node as its owner sees it: another user's node is indistinguishable from a missing one. */
export async function findUserNode(db: Queryable, userId: string, nodeId: string) {
  return (await queryNodes(db, 'SELECT * FROM nodes WHERE id = $1 AND user_id = $2', [nodeId, userId]))[0];
}

/** Which of `nodeIds` are the user's nodes (another user's are left out, exactly like missing ones). */
export async function findUserNodeIds(db: Queryable, userId: string, nodeIds: readonly string[]) {
  const rows = await db.query<{ id: string }>('SELECT id FROM nodes WHERE user_id = $1 AND id = ANY($2::text[])', [userId, nodeIds]);
  return new Set(rows.map((r) => r.id));
}

export async function findUserNodeStatus(db: Queryable, userId: string, nodeId: string) {
  return (
    await db.query<{ status: NodeStatus }>('SELECT status FROM nodes WHERE id = $1 AND user_id = $2', [nodeId, userId])
  )[0]?.status;
}

export async function findNode(db: Queryable, nodeId: string) {
  return (await queryNodes(db, 'SELECT * FROM nodes WHERE id = $1', [nodeId]))[0];
}

export async function findNodes(db: Queryable, nodeIds: string[]) {
  if (nodeIds.length === 0) return [];
  return queryNodes(db, 'SELECT * FROM nodes WHERE id = ANY($1)', [nodeIds]);
}

/** Locks the node row for the rest of the transaction so concurrent requests serialise on it. */
export async function lockUserNode(db: Queryable, userId: string, nodeId: string) {
  return (await queryNodes(db, 'SELECT * FROM nodes WHERE id = $1 AND user_id = $2 FOR UPDATE', [nodeId, userId]))[0];
}

export async function lockNode(db: Queryable, nodeId: string) {
  return (await queryNodes(db, 'SELECT * FROM nodes WHERE id = $1 FOR UPDATE', [nodeId]))[0];
}

/** Locks many nodes for this transaction, in id order, so two callers never wait on each other in a cycle. */
export async function lockNodes(db: Queryable, nodeIds: string[]) {
  if (nodeIds.length === 0) return [];
  return queryNodes(db, 'SELECT * FROM nodes WHERE id = ANY($1) ORDER BY id FOR UPDATE', [nodeIds]);
}

/**
 * A user's nodes with their builds in one statement returning one JSON document: for a list of
 * 100 nodes with 500 builds this is about twice as fast as fetching the rows, because the drivers'
 * per-row, per-column decoding is what costs (measured on PGlite; see docs/BENCHMARKS.md).
 */
export async function listUserNodesWithBuilds(
  db: Queryable,
  userId: string,
  page: { afterId?: string; limit?: number; onlyIds?: readonly string[] | null } = {},
): Promise<Array<{ node: Node; builds: Build[] }>> {
  // A page is the nodes after `afterId` in (created_at, id) order: stable while nodes are added.
  // `onlyIds`: just these (a token limited to some nodes); null or absent: every node.
  const [row] = await db.query<{ nodes: Array<{ node: Json<NodeRow>; builds: Json<BuildRow>[] | null }> }>(
    `SELECT coalesce(json_agg(json_build_object(
         'node', n,
         'builds', (SELECT json_agg(b ORDER BY b.build_number) FROM builds b WHERE b.node_id = n.id)
       ) ORDER BY n.created_at, n.id), '[]') AS nodes
     FROM (SELECT * FROM nodes WHERE user_id = $1
             AND ($2::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM nodes WHERE id = $2 AND user_id = $1))
             AND ($4::text[] IS NULL OR id = ANY($4::text[]))
           ORDER BY created_at, id LIMIT $3) n`,
    [userId, page.afterId ?? null, page.limit ?? null, page.onlyIds ?? null],
  );
  return (row?.nodes ?? []).map((entry) => ({
    node: nodeFromRow({
      ...entry.node,
      created_at: new Date(entry.node.created_at),
      updated_at: new Date(entry.node.updated_at),
      destroyed_at: entry.node.destroyed_at === null ? null : new Date(entry.node.destroyed_at),
      storage_measured_at: entry.node.storage_measured_at === null ? null : new Date(entry.node.storage_measured_at),
      vss_measured_at: entry.node.vss_measured_at === null ? null : new Date(entry.node.vss_measured_at),
    }),
    builds: (entry.builds ?? []).map((b) =>
      buildFromRow({ ...b, started_at: new Date(b.started_at), finished_at: b.finished_at === null ? null : new Date(b.finished_at) }),
    ),
  }));
}

/** A row as json_agg renders it: timestamps become strings. */
type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/** Nodes the control plane still looks after (everything not yet destroyed). */
export async function listLiveNodes(db: Queryable) {
  return queryNodes(db, `SELECT * FROM nodes WHERE status <> 'DESTROYED' ORDER BY created_at, id`);
}

/** What a node change may set; `destroyed` stamps destroyedAt. */
export type NodePatch = Partial<
  Pick<Node, 'status' | 'desiredState' | 'locked' | 'initialized' | 'imageVersion' | 'settings' | 'peerHost' | 'peerPort' | 'autoUnlockSealed' | 'supersededBy' | 'continuousState'>
> & {
  destroyed?: boolean;
};

/** The column of each field a patch may set. */
const PATCH_COLUMNS: Record<Exclude<keyof NodePatch, 'destroyed'>, string> = {
  status: 'status',
  desiredState: 'desired_state',
  locked: 'locked',
  initialized: 'initialized',
  imageVersion: 'image_version',
  settings: 'settings',
  peerHost: 'peer_host',
  peerPort: 'peer_port',
  autoUnlockSealed: 'auto_unlock_sealed',
  supersededBy: 'superseded_by',
  continuousState: 'continuous_state',
};

export async function updateNode(db: Queryable, nodeId: string, patch: NodePatch) {
  return (await updateNodes(db, [nodeId], patch))[0];
}

/** One patch to many nodes in one statement (a rollout pass starts many upgrades at once). */
export async function updateNodes(db: Queryable, nodeIds: string[], patch: NodePatch) {
  const sets: string[] = ['updated_at = now()'];
  const params: unknown[] = [nodeIds];
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined || field === 'destroyed') continue;
    params.push(field === 'settings' ? jsonParam(value) : value);
    sets.push(`${PATCH_COLUMNS[field as keyof typeof PATCH_COLUMNS]} = $${params.length}`);
  }
  if (patch.destroyed) sets.push('destroyed_at = now()');
  return queryNodes(db, `UPDATE nodes SET ${sets.join(', ')} WHERE id = ANY($1) RETURNING *`, params);
}

const PORT_ALLOCATION_LOCK = 727_002; // arbitrary, constant: "rln-cloud port allocation" among advisory locks

/**
 * Ports held by nodes that are not destroyed (their daemons may run, or will again). Called in the
 * transaction that inserts a new node with the ports it picks: it first takes a transaction-scoped
 * advisory lock, so two creations running at once (PostgreSQL, any replica) pick one after the
 * other and never the same pair; the lock ends with the transaction.
 */
export async function usedPorts(db: Queryable): Promise<Set<number>> {
  await db.query('SELECT pg_advisory_xact_lock($1)', [PORT_ALLOCATION_LOCK]);
  const rows = await db.query<{ rest_port: number | null; peer_port: number | null }>(
    'SELECT rest_port, peer_port FROM nodes WHERE destroyed_at IS NULL',
  );
  return new Set(rows.flatMap((r) => [r.rest_port, r.peer_port]).filter((port): port is number => port !== null));
}

/** How many ports of `range` nodes hold (as usedPorts counts them), for the metrics; takes no lock. */
export async function countHeldPorts(db: Queryable, range: { from: number; to: number }): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM nodes, LATERAL (VALUES (rest_port), (peer_port)) AS p(port)
      WHERE destroyed_at IS NULL AND p.port BETWEEN $1 AND $2`,
    [range.from, range.to],
  );
  return Number(row?.n ?? 0);
}

/** Nodes not destroyed: on Kubernetes' NodePort mode, each holds a node port through its peer Service. */
export async function countNodesHoldingPorts(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM nodes WHERE destroyed_at IS NULL`);
  return Number(row?.n ?? 0);
}

export async function purgeDestroyedNodes(db: Queryable, olderThanHours: number) {
  const rows = await db.query<{ id: string }>(
    `DELETE FROM nodes WHERE status = 'DESTROYED' AND destroyed_at < now() - make_interval(hours => $1) RETURNING id`,
    [olderThanHours],
  );
  return rows.length;
}

/**
 * One page of the settled nodes (no build in progress) whose daemon should run (daemonShouldRun,
 * nodes/lifecycle.ts; migration 0024's index), in id order after `afterId`: a reconcile pass reads
 * them page by page, so no read holds them all.
 */
export async function listNodesThatShouldRun(db: Queryable, afterId: string | null, limit: number) {
  return queryNodes(
    db,
    `SELECT n.* FROM nodes n
     WHERE n.status = 'RUNNING' AND n.desired_state = 'running' AND n.superseded_by IS NULL
       AND ($1::text IS NULL OR n.id > $1)
       AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.node_id = n.id AND b.status = 'IN_PROGRESS')
     ORDER BY n.id LIMIT $2`,
    [afterId, limit],
  );
}

/**
 * Of `ids`, the settled nodes (no build in progress) whose daemon the reconcile loop may start or
 * stop. An EXPORTED node's daemon is stopped here: no build stops it (the export's backup does not
 * run as a build), and nothing starts it again (daemonShouldRun is false for it).
 */
export async function listNodesToReconcile(db: Queryable, ids: string[]) {
  return queryNodes(
    db,
    `SELECT n.* FROM nodes n
     WHERE n.id = ANY($1::text[]) AND n.status IN ('RUNNING', 'PAUSED', 'FAILED', 'STORAGE_LOST', 'EXPORTED')
       AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.node_id = n.id AND b.status = 'IN_PROGRESS')
     ORDER BY n.id`,
    [ids],
  );
}

/** How many nodes have each status (metrics), in one pass over the table. */
export async function countNodesByStatus(db: Queryable) {
  const rows = await db.query<{ status: NodeStatus; n: number }>('SELECT status, count(*)::int AS n FROM nodes GROUP BY status');
  return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
}

/** The nodes a restore into `nodeId` superseded. */
export async function listSupersededBy(db: Queryable, nodeId: string) {
  return db.query<{ id: string; status: NodeStatus }>('SELECT id, status FROM nodes WHERE superseded_by = $1', [nodeId]);
}

/**
 * A restore into `nodeId` failed before the daemon restored anything: the node it superseded holds
 * the only copy of the wallet again and may run. Answers the nodes released.
 */
export async function releaseSupersededBy(db: Queryable, nodeId: string) {
  return db.query<{ id: string }>('UPDATE nodes SET superseded_by = NULL, updated_at = now() WHERE superseded_by = $1 RETURNING id', [nodeId]);
}

/** The account's nodes that take a slot of its plan (domain/node-status-meaning.ts): not destroyed, not superseded. */
export async function countLiveNodes(db: Queryable, userId: string) {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM nodes WHERE user_id = $1 AND status = ANY($2::text[]) AND superseded_by IS NULL`,
    [userId, SLOT_STATUSES],
  );
  return Number(rows[0]?.n ?? 0);
}

/** The account's nodes, other than `exceptNodeId`, that count as running (countsAsRunning, domain/node-status-meaning.ts). */
export async function countRunningNodes(db: Queryable, userId: string, exceptNodeId: string | null = null) {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM nodes
     WHERE user_id = $1 AND status = ANY($2::text[]) AND superseded_by IS NULL AND desired_state = 'running'
       AND ($3::text IS NULL OR id <> $3)`,
    [userId, SLOT_STATUSES, exceptNodeId],
  );
  return Number(rows[0]?.n ?? 0);
}
