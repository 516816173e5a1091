// The authentication rollout (issue #40, point 5): one at a time, with one row per node whose daemon
// still runs without RLN's authentication (nodes/rollout/authentication-rollout.ts).
import type { Queryable } from './database.ts';
import { queryNodes } from './nodes.ts';
import type { RolloutRow } from './rollouts.ts';

export type AuthenticationRolloutNodeState = 'pending' | 'restarting' | 'succeeded' | 'failed' | 'skipped';
export const AUTHENTICATION_ROLLOUT_NODE_STATES: AuthenticationRolloutNodeState[] = ['pending', 'restarting', 'succeeded', 'failed', 'skipped'];

/** A release rollout's row without its version: the one authentication rollout. */
export type AuthenticationRolloutRow = Omit<RolloutRow, 'version'>;

/** Starts a rollout, replacing a completed one; undefined when one is running or paused. */
export async function insertAuthenticationRollout(db: Queryable, concurrency: number, failureBudget: number) {
  const rows = await db.query<AuthenticationRolloutRow>(
    `INSERT INTO authentication_rollout (id, state, concurrency, failure_budget) VALUES (1, 'running', $1, $2)
     ON CONFLICT (id) DO UPDATE SET state = 'running', concurrency = $1, failure_budget = $2, paused_reason = NULL,
       created_at = now(), updated_at = now()
     WHERE authentication_rollout.state = 'completed'
     RETURNING *`,
    [concurrency, failureBudget],
  );
  if (rows.length === 0) return undefined;
  await db.query('DELETE FROM authentication_rollout_nodes');
  return rows[0]!;
}

/**
 * Enrols every live node whose daemon has never been started with a root key: no key was ever
 * asked for it (a runtime asks at every daemon start, secrets/node-root-keys.ts), so the daemon it
 * runs, if any, was started with --disable-authentication. Returns how many.
 */
export async function enrolNodesWithoutAuthentication(db: Queryable) {
  const rows = await db.query<{ node_id: string }>(
    `INSERT INTO authentication_rollout_nodes (node_id, state)
     SELECT n.id, 'pending' FROM nodes n
     WHERE n.status NOT IN ('DESTROYING', 'DESTROYED', 'EXPORTED')
       AND NOT EXISTS (SELECT 1 FROM node_root_keys k WHERE k.node_id = n.id)
     RETURNING node_id`,
  );
  return rows.length;
}

export async function lockAuthenticationRollout(db: Queryable) {
  return (await db.query<AuthenticationRolloutRow>('SELECT * FROM authentication_rollout WHERE id = 1 FOR UPDATE'))[0];
}

export async function findAuthenticationRollout(db: Queryable) {
  return (await db.query<AuthenticationRolloutRow>('SELECT * FROM authentication_rollout WHERE id = 1'))[0];
}

export async function updateAuthenticationRollout(db: Queryable, patch: Partial<Pick<AuthenticationRolloutRow, 'state' | 'paused_reason' | 'failure_budget'>>) {
  await db.query(
    `UPDATE authentication_rollout SET state = coalesce($1, state), paused_reason = $2,
       failure_budget = coalesce($3, failure_budget), updated_at = now() WHERE id = 1`,
    [patch.state ?? null, patch.paused_reason ?? null, patch.failure_budget ?? null],
  );
}

export async function countAuthenticationRolloutNodes(db: Queryable): Promise<Record<AuthenticationRolloutNodeState, number>> {
  const counts = Object.fromEntries(AUTHENTICATION_ROLLOUT_NODE_STATES.map((s) => [s, 0])) as Record<AuthenticationRolloutNodeState, number>;
  const rows = await db.query<{ state: AuthenticationRolloutNodeState; n: number }>(
    'SELECT state, count(*)::int AS n FROM authentication_rollout_nodes GROUP BY state',
  );
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

/**
 * Pending nodes that can be restarted now, locked for this transaction. Nodes another transaction
 * holds, or with a build in progress, are passed over and stay pending for a later pass.
 */
export async function lockRestartCandidates(db: Queryable, limit: number) {
  return queryNodes(
    db,
    `SELECT n.* FROM authentication_rollout_nodes rn JOIN nodes n ON n.id = rn.node_id
     WHERE rn.state = 'pending'
       AND NOT EXISTS (SELECT 1 FROM builds b WHERE b.node_id = n.id AND b.status = 'IN_PROGRESS')
     ORDER BY n.created_at, n.id LIMIT $1
     FOR UPDATE OF n SKIP LOCKED`,
    [limit],
  );
}

/** Moves many nodes to one state, each with its build number (or none) and the reason (or none). */
export async function setAuthenticationRolloutNodes(
  db: Queryable,
  state: AuthenticationRolloutNodeState,
  nodes: Array<{ nodeId: string; buildNumber?: number; reason?: string }>,
) {
  if (nodes.length === 0) return;
  await db.query(
    `UPDATE authentication_rollout_nodes rn SET state = $1, build_number = coalesce(u.build_number, rn.build_number), error = u.reason, updated_at = now()
     FROM unnest($2::text[], $3::int[], $4::text[]) AS u(node_id, build_number, reason)
     WHERE rn.node_id = u.node_id`,
    [state, nodes.map((n) => n.nodeId), nodes.map((n) => n.buildNumber ?? null), nodes.map((n) => n.reason ?? null)],
  );
}

/** Records how restart builds ended; true when any of them was the rollout's. */
export async function settleAuthenticationRolloutNodes(db: Queryable, settled: Array<{ nodeId: string; outcome: 'succeeded' | 'failed'; error?: string }>) {
  if (settled.length === 0) return false;
  const rows = await db.query(
    `UPDATE authentication_rollout_nodes rn SET state = s.outcome, error = s.error, updated_at = now()
     FROM unnest($1::text[], $2::text[], $3::text[]) AS s(node_id, outcome, error)
     WHERE rn.node_id = s.node_id AND rn.state = 'restarting'
     RETURNING rn.node_id`,
    [settled.map((s) => s.nodeId), settled.map((s) => s.outcome), settled.map((s) => s.error ?? null)],
  );
  return rows.length > 0;
}

/** The nodes of the rollout in one state, with their reasons (the status command lists the failed ones). */
export async function listAuthenticationRolloutNodes(db: Queryable, state: AuthenticationRolloutNodeState, limit: number) {
  return db.query<{ node_id: string; build_number: number | null; error: string | null }>(
    'SELECT node_id, build_number, error FROM authentication_rollout_nodes WHERE state = $1 ORDER BY updated_at, node_id LIMIT $2',
    [state, limit],
  );
}
