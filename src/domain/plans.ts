// Plans are data the operator manages (db/plans.ts, `rln-cloud plan ...`): a name, limits and
// whether the account's nodes get new image versions automatically. Accounts on a plan that does
// not see the upgrade as available (NODE_UPGRADE_AVAILABLE, the UI's notice) and upgrade when they
// choose. The catalog starts with the original's four plans (migration 0020).

/** A plan's name: lowercase, as stored (plans.name). */
export type Plan = string;

export const SEEDED_PLANS = ['starter', 'growth', 'scale', 'wallet'] as const;

export const PLAN_NAME = /^[a-z][a-z0-9-]{0,31}$/;

export interface PlanLimits {
  /** null: unlimited. */
  maxNodes: number | null;
  apiCallsPerMonth: number | null;
  maxUsers: number | null;
  autoUpgrade: boolean;
}

export interface PlanDefinition extends PlanLimits {
  name: Plan;
}
