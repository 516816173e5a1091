// Which plans get new image versions automatically. Users on other plans see the upgrade as
// available (NODE_UPGRADE_AVAILABLE, the UI's notice) and upgrade when they choose.
import type { Plan } from '../db/users.ts';

export const AUTO_UPGRADE_PLANS: readonly Plan[] = ['scale', 'wallet'];

export const upgradesAutomatically = (plan: Plan) => AUTO_UPGRADE_PLANS.includes(plan);
