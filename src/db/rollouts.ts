// Release rollouts: one per published version, with one row per node it is to upgrade.
import type { Queryable } from './database.ts';
import { queryNodes } from './nodes.ts';

export type RolloutState = 'running' | 'paused' | 'completed';
export const ROLLOUT_STATES: RolloutState[] = ['running', 'paused', 'completed'];
export type RolloutNodeState = 'pending' | 'upgrading' | 'deferred' | 'succeeded' | 'failed' | 'skipped';
export const ROLLOUT_NODE_STATES: RolloutNodeState[] = ['pending', 'upgrading', 'deferred', 'succeeded', 'failed', 'skipped'];

export interface RolloutRow {
  version: string;
  state: RolloutState;
  concurrency: number;
  failure_budget: number;
  paused_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertRollout(db: Queryable, version: string, concurrency: number, failureBudget: number) {
  return (
    await db.query<RolloutRow>(
      `INSERT INTO rollouts (version, state, concurrency, failure_budget) VALUES ($1, 'running', $2, $3) RETURNING *`,
      [version, concurrency, failureBudget],
    )
  )[0]!;
}

/**
 * Enrols every live node of an automatically upgrading plan that is not on `version` yet: PAUSED
 * nodes are deferred to their next start, the others wait for a slot. Returns how many.
 */
export async function enrolRolloutNodes(db: Queryable, version: string) {
  const rows = await db.query<{ node_id: string }>(
    `INSERT INTO rollout_nodes (version, node_id, state)
     SELECT $1, n.id, CASE WHEN n.status = 'PAUSED' THEN 'deferred' ELSE 'pending' END
     FROM nodes n JOIN accounts a ON a.id = n.user_id JOIN plans p ON p.name = a.plan
     WHERE p.auto_upgrade AND n.status NOT IN ('DESTROYING', 'DESTROYED') AND n.image_version <> $1
     RETURNING node_id`,
    [version],
  );
  return rows.length;
}

/** One NODE_UPGRADE_AVAILABLE event per live node of the other plans, in one statement. */
export async function recordUpgradeAvailableEvents(db: Queryable, version: string) {
  const rows = await db.query(
    `INSERT INTO node_events (event_id, node_id, user_id, event_type, payload)
     SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), n.id, n.user_id, 'NODE_UPGRADE_AVAILABLE',
            jsonb_build_object(
              'eventType', 'NODE_UPGRADE_AVAILABLE',
              'eventTimestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'nodeId', n.id,
              'details', jsonb_build_object('nodeId', n.id, 'version', $1::text, 'currentVersion', n.image_version))
     FROM nodes n JOIN accounts a ON a.id = n.user_id JOIN plans p ON p.name = a.plan
     WHERE NOT p.auto_upgrade AND n.status NOT IN ('DESTROYING', 'DESTROYED') AND n.image_version <> $1
     RETURNING id`,
    [version],
  );
  if (rows.length > 0) db.signalAfterCommit('node-events');
  return rows.length;
}

export async function lockRollout(db: Queryable, version: string) {
  return (await db.query<RolloutRow>('SELECT * FROM rollouts WHERE version = $1 FOR UPDATE', [version]))[0];
}

export async function findRollout(db: Queryable, version: string) {
  return (await db.query<RolloutRow>('SELECT * FROM rollouts WHERE version = $1', [version]))[0];
}

export async function listRunningRollouts(db: Queryable) {
  return db.query<RolloutRow>(`SELECT * FROM rollouts WHERE state = 'running' ORDER BY created_at`);
}

export async function updateRollout(db: Queryable, version: string, patch: Partial<Pick<RolloutRow, 'state' | 'paused_reason' | 'failure_budget'>>) {
  await db.query(
    `UPDATE rollouts SET state = coalesce($2, state), paused_reason = $3,
       failure_budget = coalesce($4, failure_budget), updated_at = now() WHERE version = $1`,
    [version, patch.state ?? null, patch.paused_reason ?? null, patch.failure_budget ?? null],
  );
}

export async function countRolloutNodes(db: Queryable, version: string): Promise<Record<RolloutNodeState, number>> {
  const counts = Object.fromEntries(ROLLOUT_NODE_STATES.map((s) => [s, 0])) as Record<RolloutNodeState, number>;
  const rows = await db.query<{ state: RolloutNodeState; n: number }>(
    'SELECT state, count(*)::int AS n FROM rollout_nodes WHERE version = $1 GROUP BY state',
    [version],
  );
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

/**
 * Pending nodes that can take an upgrade now, locked for this transaction. Nodes another
 * transaction holds, or with a build in progress, are passed over and stay pending for a later pass.
 */
export async function lockUpgradeCandidates(db: Queryable, version: string, limit: number) {
  return queryNodes(
    db,
    `SELECT n.* FROM rollout_nodes rn JOIN nodes n ON n.id = rn.node_id
     WHERE rn.version = $1 AND rn.state = 'pending'
       AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.node_id = n.id AND b.status = 'IN_PROGRESS')
     ORDER BY n.created_at, n.id LIMIT $2
     FOR UPDATE OF n SKIP LOCKED`,
    [version, limit],
  );
}

/** Moves many nodes of a rollout to one state, each with its own build number (or none). */
export async function setRolloutNodes(db: Queryable, version: string, state: RolloutNodeState, nodes: Array<{ nodeId: string; buildNumber?: number }>) {
  if (nodes.length === 0) return;
  await db.query(
    `UPDATE rollout_nodes rn SET state = $2, build_number = coalesce(u.build_number, rn.build_number), error = NULL, updated_at = now()
     FROM unnest($3::text[], $4::int[]) AS u(node_id, build_number)
     WHERE rn.version = $1 AND rn.node_id = u.node_id`,
    [version, state, nodes.map((n) => n.nodeId), nodes.map((n) => n.buildNumber ?? null)],
  );
}

/**
 * Records how a node's move to `version` ended, whoever started it (the rollout, the user's own
 * upgrade, or a start that applied a deferred upgrade). Returns whether the node was in a rollout.
 */
export async function settleRolloutNode(db: Queryable, version: string, nodeId: string, outcome: 'succeeded' | 'failed', error?: string) {
  const rows = await db.query(
    `UPDATE rollout_nodes SET state = $3, error = $4, updated_at = now()
     WHERE version = $1 AND node_id = $2 AND state IN ('pending', 'upgrading', 'deferred') RETURNING node_id`,
    [version, nodeId, outcome, error ?? null],
  );
  return rows.length > 0;
}

/** settleRolloutNode for many nodes in one statement; returns the versions in which any node was settled. */
export async function settleRolloutNodes(
  db: Queryable,
  settled: Array<{ version: string; nodeId: string; outcome: 'succeeded' | 'failed'; error?: string }>,
): Promise<string[]> {
  if (settled.length === 0) return [];
  const rows = await db.query<{ version: string }>(
    `UPDATE rollout_nodes rn SET state = s.outcome, error = s.error, updated_at = now()
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS s(version, node_id, outcome, error)
     WHERE rn.version = s.version AND rn.node_id = s.node_id AND rn.state IN ('pending', 'upgrading', 'deferred')
     RETURNING rn.version`,
    [settled.map((s) => s.version), settled.map((s) => s.nodeId), settled.map((s) => s.outcome), settled.map((s) => s.error ?? null)],
  );
  return [...new Set(rows.map((r) => r.version))];
}

/** Pending nodes of a rollout that a newer release overtook: nothing left to do for this one. */
export async function skipPendingRolloutNodes(db: Queryable, version: string, reason: string) {
  await db.query(
    `UPDATE rollout_nodes SET state = 'skipped', error = $2, updated_at = now() WHERE version = $1 AND state IN ('pending', 'deferred')`,
    [version, reason],
  );
}

export async function deferredRolloutVersion(db: Queryable, nodeId: string) {
  return (
    await db.query<{ version: string }>(
      `SELECT rn.version FROM rollout_nodes rn JOIN image_versions v ON v.version = rn.version
       WHERE rn.node_id = $1 AND rn.state = 'deferred' ORDER BY v.seq DESC LIMIT 1`,
      [nodeId],
    )
  )[0]?.version;
}

/** Rollouts by state, for the metrics (a paused one waits for an operator). */
export async function countRolloutsByState(db: Queryable): Promise<Record<RolloutState, number>> {
  const rows = await db.query<{ state: RolloutState; n: number }>(`SELECT state, count(*)::int AS n FROM rollouts GROUP BY state`);
  const counts: Record<RolloutState, number> = { running: 0, paused: 0, completed: 0 };
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

/** Rollouts upgrading nodes now (not paused, not completed), for the metrics. */
export async function countRunningRollouts(db: Queryable) {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM rollouts WHERE state = 'running'`);
  return Number(row?.n ?? 0);
}
