// GET /api/usage?month=YYYY-MM: the account's metered usage of a calendar month (UTC), per node and
// in total, with a day-by-day series of node time (docs/USAGE.md). The web UI's chart reads it.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { AppError } from '../../errors.ts';
import { MONTH_PATTERN } from '../../usage/node-time.ts';
import type { ApiDeps } from '../deps.ts';

const UsageQuery = Type.Object(
  { month: Type.Optional(Type.String({ maxLength: 7, description: 'The calendar month (UTC), `YYYY-MM`; this month when left out. A month not begun yet is refused.' })) },
  { additionalProperties: false },
);
type UsageQuery = Static<typeof UsageQuery>;

const Figures = {
  runningSeconds: Type.Integer({ description: 'Seconds RUNNING within the month.' }),
  pausedSeconds: Type.Integer({ description: 'Seconds PAUSED within the month (billed too).' }),
  apiCalls: Type.Integer({ description: 'Management API calls.' }),
  gatewayCalls: Type.Integer({ description: 'Calls through the node gateways (bearer and mutual TLS).' }),
};

export const AccountUsage = Type.Object({
    month: Type.String({ description: '`YYYY-MM`.' }),
    closed: Type.Boolean({ description: 'True once the month has ended and its figures are final; they never change afterwards.' }),
    from: Type.String({ format: 'date-time', description: 'The month\'s first instant (UTC).' }),
    to: Type.String({ format: 'date-time', description: 'The next month\'s first instant: the period is [from, to).' }),
    nodes: Type.Array(Type.Object({ nodeId: Type.String(), name: Type.String(), ...Figures }), {
      description: 'Every node of the account in the month, destroyed ones included.',
    }),
    total: Type.Object(Figures, { description: "The nodes' sum, plus the management API calls about no node." }),
    days: Type.Array(Type.Object({ date: Type.String({ description: '`YYYY-MM-DD` (UTC).' }), runningSeconds: Type.Integer(), pausedSeconds: Type.Integer() }), {
      description: "Node time per day of the month, every day listed (days to come are zero).",
    }),
    vssBytes: Type.Integer({ description: "Bytes of values held now in the account's VSS stores (docs/VSS.md), whatever the month; of the token's nodes only for a token limited to some." }),
    members: Type.Array(
      Type.Object({
        userId: Type.String(),
        email: Type.Union([Type.String(), Type.Null()], { description: 'Null once the user was deleted.' }),
        calls: Type.Integer({ description: "The member's management API and gateway calls, with every token, the web session and the client certificates they issued." }),
        monthlyApiCalls: Type.Union([Type.Integer(), Type.Null()], { description: "The member's cap (PUT /api/account/members/{userId}/monthly-api-calls); null: none." }),
      }),
      { description: 'Who spent the month\'s calls, the most first (calls through a client certificate are its issuer\'s; one the operator issued is in no member). Empty for a token limited to some nodes.' },
    ),
    tokens: Type.Array(
      Type.Object({
        tokenId: Type.String(),
        name: Type.Union([Type.String(), Type.Null()], { description: "Null once the token's user was deleted." }),
        userId: Type.String({ description: "The token's member." }),
        calls: Type.Integer({ description: 'Management API and bearer gateway calls made with the token.' }),
        monthlyApiCalls: Type.Union([Type.Integer(), Type.Null()], { description: "The token's cap (PUT /api/tokens/{id}/monthly-api-calls); null: none." }),
      }),
      { description: 'The same per API token (revoked ones included), the most first. Empty for a token limited to some nodes.' },
    ),
});

export function getUsageRoute(app: FastifyInstance, { usage }: ApiDeps) {
  app.get<{ Querystring: UsageQuery }>(
    '/api/usage',
    {
      schema: {
        operationId: 'getUsage',
        summary: "Your account's usage of a month",
        description:
          'Node time (seconds RUNNING and PAUSED, from the recorded status changes) and API calls (management and gateway), per node and in ' +
          "total, for a calendar month (UTC). This month's figures grow until it ends; a closed month's never change. " +
          "API calls written by other replicas appear within USAGE_FLUSH_INTERVAL_MS. A token limited to some nodes (`nodeIds`) sees those " +
          'nodes only, and a total of them (without the calls about no node).',
        tags: ['usage'],
        querystring: UsageQuery,
        response: { 200: AccountUsage, 400: errorResponses[400], 401: errorResponses[401] },
      },
    },
    async (request) => {
      const { accountId, scope } = userOf(request);
      const month = request.query.month ?? usage.currentMonth();
      if (!MONTH_PATTERN.test(month)) throw new AppError('invalid_request', `month must be YYYY-MM (e.g. ${usage.currentMonth()}), not ${JSON.stringify(month)}`);
      if (!usage.hasBegun(month)) throw new AppError('invalid_request', `${month} has not begun; the current month is ${usage.currentMonth()}`);
      return usage.accountUsage(accountId, month, scope.nodeIds);
    },
  );
}
