// GET /api/account: the caller's account — its plan, the plan's limits and this month's use of
// each — and the caller's role in it. Every member may read it.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { ROLES } from '../../domain/roles.ts';
import type { ApiDeps } from '../deps.ts';

const Limit = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'null: unlimited' });
const Use = (what: string) => Type.Object({ used: Type.Integer({ minimum: 0, description: what }), limit: Limit });

export const AccountPlan = Type.Object({
  name: Type.String(),
  maxNodes: Limit,
  apiCallsPerMonth: Limit,
  maxUsers: Limit,
  autoUpgrade: Type.Boolean({ description: "whether the account's nodes are upgraded to each new release by the service" }),
});

export const Account = Type.Object({
  id: Type.String({ description: "the account's id: the id of the user who created it (an ownership transfer keeps it), the `<user_id>` of every node URL of the account" }),
  role: Type.Union(ROLES.map((r) => Type.Literal(r)), { description: "the caller's role in the account" }),
  plan: AccountPlan,
  usage: Type.Object({
    month: Type.String({ pattern: '^\\d{4}-\\d{2}$', description: 'this calendar month (UTC)' }),
    nodes: Type.Object({
      used: Type.Integer({ minimum: 0, description: 'nodes that take a plan slot: not destroyed, not superseded (docs/ACCOUNTS.md)' }),
      running: Type.Integer({ minimum: 0, description: 'of those, the nodes meant to run: at most the limit for any start' }),
      limit: Limit,
    }),
    apiCalls: Use('management API and gateway calls this month, as counted so far (docs/USAGE.md)'),
    users: Type.Object({ used: Type.Integer({ minimum: 1 }), pendingInvitations: Type.Integer({ minimum: 0 }), limit: Limit }),
  }),
});

export function getAccountRoute(app: FastifyInstance, { plans, usage }: ApiDeps) {
  app.get(
    '/api/account',
    {
      schema: {
        operationId: 'getAccount',
        summary: 'Your account: its plan, limits and use',
        description: 'The plan of the account the token or session belongs to, its limits (null: unlimited) and how much of each is used this month (UTC).',
        tags: ['account'],
        response: { 200: Account, 401: errorResponses[401] },
      },
    },
    async (request) => {
      const { accountId, role } = userOf(request);
      const use = await plans.accountUse(accountId);
      return {
        id: accountId,
        role,
        plan: use.plan,
        usage: {
          month: new Date().toISOString().slice(0, 7),
          nodes: use.nodes,
          apiCalls: { used: await usage.monthApiCalls(accountId), limit: use.plan.apiCallsPerMonth },
          users: use.users,
        },
      };
    },
  );
}
