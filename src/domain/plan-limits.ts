// What a plan's limit allows: the one rule behind every 403 plan_limit_reached. A limit refuses
// what would go past it and never undoes what exists, so a downgrade stops nothing that runs: an
// account above its new limit keeps its nodes and members and can only not add more.
import { AppError } from '../errors.ts';
import type { PlanDefinition } from './plans.ts';

export type CountedLimit = 'nodes' | 'runningNodes' | 'users';

const LIMIT_OF: Record<CountedLimit, (plan: PlanDefinition) => number | null> = {
  nodes: (plan) => plan.maxNodes,
  // The same limit bounds the nodes that run: an account above its limit (a downgrade, a failed
  // restore that released its source) keeps its nodes but runs no more than the plan allows.
  runningNodes: (plan) => plan.maxNodes,
  users: (plan) => plan.maxUsers,
};

const NOUN: Record<CountedLimit, string> = { nodes: 'node', runningNodes: 'running node', users: 'user' };

/** Why adding one more is refused when `used` already reaches the plan's limit (null: unlimited); undefined when there is room. */
export function planLimitRefusal(plan: PlanDefinition, limit: CountedLimit, used: number) {
  const max = LIMIT_OF[limit](plan);
  if (max === null || used < max) return undefined;
  return {
    code: 'plan_limit_reached' as const,
    message:
      limit === 'runningNodes'
        ? `the ${plan.name} plan allows ${max} running node${max === 1 ? '' : 's'} and the account runs ${used}; stop or destroy one, or change the plan`
        : `the ${plan.name} plan allows ${max} ${NOUN[limit]}${max === 1 ? '' : 's'} and the account has ${used}; change the plan for more`,
    details: { limit, max, used, plan: plan.name },
  };
}

/** Refuses adding one more when `used` already reaches the plan's limit (null: unlimited). */
export function requireRoomFor(plan: PlanDefinition, limit: CountedLimit, used: number) {
  const refusal = planLimitRefusal(plan, limit, used);
  if (refusal) throw new AppError(refusal.code, refusal.message, refusal.details);
}
