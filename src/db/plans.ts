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
