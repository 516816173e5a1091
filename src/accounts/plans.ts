// The plan catalog and the accounts' plans, as the operator manages them (`rln-cloud plan ...`,
// `rln-cloud account set-plan`) and GET /api/account shows them.
import type { Database } from '../db/database.ts';
import { findAccountPlan, findPlan, listPlans, setAccountPlan, upsertPlan } from '../db/plans.ts';
import { countSeats } from '../db/accounts.ts';
import { countLiveNodes, countRunningNodes } from '../db/nodes.ts';
import { findUserByEmail } from '../db/users.ts';
import { PLAN_NAME, type PlanDefinition, type PlanLimits } from '../domain/plans.ts';
import { AppError } from '../errors.ts';
import { normalEmail } from '../domain/email.ts';

/** A limit as the operator writes it: a whole number, or `unlimited`. */
export type LimitInput = number | 'unlimited';

export interface PlanChange {
  maxNodes?: LimitInput;
  apiCallsPerMonth?: LimitInput;
  maxUsers?: LimitInput;
  autoUpgrade?: boolean;
}

const limitOf = (v: LimitInput | undefined) => (v === undefined ? undefined : v === 'unlimited' ? null : v);

export class PlanService {
  constructor(private readonly db: Database) {}

  list(): Promise<PlanDefinition[]> {
    return listPlans(this.db);
  }

  /**
   * Creates a plan (limits left out are unlimited, automatic upgrades off) or changes the limits
   * given of an existing one. A lower limit refuses only what would pass it from now on: nothing
   * that runs is stopped (domain/plan-limits.ts).
   */
  async set(name: string, change: PlanChange): Promise<{ plan: PlanDefinition; created: boolean }> {
    if (!PLAN_NAME.test(name)) throw new AppError('invalid_request', `"${name.slice(0, 40)}" is not a plan name (lowercase letters, digits and -, up to 32)`);
    if (change.maxUsers === 0) throw new AppError('invalid_request', '--users must be at least 1: an account always has its owner');
    const existing = await findPlan(this.db, name);
    const limits: Partial<PlanLimits> = {
      maxNodes: limitOf(change.maxNodes),
      apiCallsPerMonth: limitOf(change.apiCallsPerMonth),
      maxUsers: limitOf(change.maxUsers),
      autoUpgrade: change.autoUpgrade,
    };
    return { plan: await upsertPlan(this.db, name, limits), created: !existing };
  }

  /** Moves the account of the member with this email to another plan; answers what changed. */
  async setAccountPlan(emailRaw: string, planName: string) {
    const member = await findUserByEmail(this.db, normalEmail(emailRaw));
    if (!member) throw new AppError('user_not_found', `no user with email ${emailRaw}`);
    const plan = await findPlan(this.db, planName);
    if (!plan) throw new AppError('plan_not_found', `no plan named ${planName}; see rln-cloud plan list`);
    await setAccountPlan(this.db, member.account_id, plan.name);
    return { accountId: member.account_id, plan: plan.name, previousPlan: member.plan };
  }

  /** The account's plan with this month's use of each of its limits (GET /api/account). */
  async accountUse(accountId: string) {
    const plan = await findAccountPlan(this.db, accountId);
    if (!plan) throw new AppError('not_found', 'the account was not found');
    const seats = await countSeats(this.db, accountId);
    return {
      plan,
      nodes: { used: await countLiveNodes(this.db, accountId), running: await countRunningNodes(this.db, accountId), limit: plan.maxNodes },
      users: { used: seats.members, pendingInvitations: seats.pending, limit: plan.maxUsers },
    };
  }
}
