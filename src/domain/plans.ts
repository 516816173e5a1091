// Plans, and which of them get new image versions automatically. Users on other plans see the
// upgrade as available (NODE_UPGRADE_AVAILABLE, the UI's notice) and upgrade when they choose.

export type Plan = 'starter' | 'growth' | 'scale' | 'wallet';
export const PLANS: Plan[] = ['starter', 'growth', 'scale', 'wallet'];

export const AUTO_UPGRADE_PLANS: readonly Plan[] = ['scale', 'wallet'];

export const upgradesAutomatically = (plan: Plan) => AUTO_UPGRADE_PLANS.includes(plan);
