// The plan catalog (migration 0020): limits per plan, NULL for unlimited.
import type { Queryable } from './database.ts';
import type { PlanDefinition } from '../domain/plans.ts';

interface PlanRow {
  name: string;
  max_nodes: number | null;
  api_calls_per_month: string | number | null;
  max_users: number | null;
  auto_upgrade: boolean;
}

const planFromRow = (r: PlanRow): PlanDefinition => ({
  name: r.name,
  maxNodes: r.max_nodes,
  // bigint arrives as a string from node-postgres.
  apiCallsPerMonth: r.api_calls_per_month === null ? null : Number(r.api_calls_per_month),
  maxUsers: r.max_users,
  autoUpgrade: r.auto_upgrade,
});

export async function listPlans(db: Queryable): Promise<PlanDefinition[]> {
  return (await db.query<PlanRow>('SELECT * FROM plans ORDER BY name')).map(planFromRow);
}

export async function findPlan(db: Queryable, name: string): Promise<PlanDefinition | undefined> {
  const row = (await db.query<PlanRow>('SELECT * FROM plans WHERE name = $1', [name]))[0];
  return row && planFromRow(row);
}

/** The plan of an account. */
export async function findAccountPlan(db: Queryable, accountId: string): Promise<PlanDefinition | undefined> {
  const row = (await db.query<PlanRow>('SELECT p.* FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1', [accountId]))[0];
  return row && planFromRow(row);
}

/**
 * The account's plan, its row locked until the transaction ends: what checks a limit and then
 * adds one more holds it, so two concurrent creations at the edge cannot both pass.
 */
export async function lockAccountPlan(db: Queryable, accountId: string): Promise<PlanDefinition | undefined> {
  const row = (
    await db.query<PlanRow>('SELECT p.* FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1 FOR UPDATE OF a', [accountId])
  )[0];
  return row && planFromRow(row);
}

/** Creates the plan or changes the given limits of an existing one; `undefined` leaves a limit as it is. */
export async function upsertPlan(db: Queryable, name: string, change: Partial<Omit<PlanDefinition, 'name'>>): Promise<PlanDefinition> {
  const given = (k: keyof typeof change) => k in change && change[k] !== undefined;
  const row = (
    await db.query<PlanRow>(
      `INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users, auto_upgrade) VALUES ($1, $2::int, $3::bigint, $4::int, coalesce($5::boolean, false))
       ON CONFLICT (name) DO UPDATE SET
         max_nodes = CASE WHEN $6::boolean THEN EXCLUDED.max_nodes ELSE plans.max_nodes END,
         api_calls_per_month = CASE WHEN $7::boolean THEN EXCLUDED.api_calls_per_month ELSE plans.api_calls_per_month END,
         max_users = CASE WHEN $8::boolean THEN EXCLUDED.max_users ELSE plans.max_users END,
         auto_upgrade = CASE WHEN $9::boolean THEN EXCLUDED.auto_upgrade ELSE plans.auto_upgrade END,
         updated_at = now()
       RETURNING *`,
      [
        name,
        change.maxNodes ?? null,
        change.apiCallsPerMonth ?? null,
        change.maxUsers ?? null,
        change.autoUpgrade ?? null,
        given('maxNodes'),
        given('apiCallsPerMonth'),
        given('maxUsers'),
        given('autoUpgrade'),
      ],
    )
  )[0]!;
  return planFromRow(row);
}

export async function setAccountPlan(db: Queryable, accountId: string, plan: string) {
  return (await db.query<{ id: string }>('UPDATE accounts SET plan = $2 WHERE id = $1 RETURNING id', [accountId, plan]))[0] !== undefined;
}
