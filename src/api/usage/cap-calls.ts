// PUT /api/account/members/{userId}/monthly-api-calls and PUT /api/tokens/{id}/monthly-api-calls:
// an owner or admin caps one member's or one token's API calls a month, so that no one member can
// spend the account's month (docs/USAGE.md "Caps on a member or a token"). The meter enforces a
// cap like the plan's limit, with the same bound on overshooting it.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ID_PATTERN } from '../schemas.ts';
import { MemberParams } from '../account/schemas.ts';
import type { ApiDeps } from '../deps.ts';

const CapBody = Type.Object(
  {
    monthlyApiCalls: Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }), Type.Null()], {
      description: 'Management API and bearer gateway calls a month (UTC) past which this one answers 429 `quota_exceeded`; null removes the cap.',
    }),
  },
  { additionalProperties: false },
);
type CapBody = Static<typeof CapBody>;

const TokenIdParams = Type.Object({ id: Type.String({ pattern: ID_PATTERN, description: 'Token id: 32 lowercase hex characters.' }) });
type TokenIdParams = Static<typeof TokenIdParams>;

const Cap = { monthlyApiCalls: Type.Union([Type.Integer(), Type.Null()]) };

export function capMemberCallsRoute(app: FastifyInstance, { usage }: ApiDeps) {
  app.put<{ Params: MemberParams; Body: CapBody }>(
    '/api/account/members/:userId/monthly-api-calls',
    {
      config: { audit: { action: 'member.calls_capped', target: (r) => (r.params as MemberParams).userId } },
      schema: {
        operationId: 'capMemberCalls',
        summary: "Cap a member's API calls a month",
        description: 'Owner or admin. Applies to every token and the web session of the member, from the next second on every replica.',
        tags: ['usage'],
        params: MemberParams,
        body: CapBody,
        response: { 200: Type.Object({ userId: Type.String(), ...Cap }), ...errorResponses },
      },
    },
    async (request) => usage.capMember(userOf(request).accountId, request.params.userId, request.body.monthlyApiCalls),
  );
}

export function capTokenCallsRoute(app: FastifyInstance, { usage }: ApiDeps) {
  app.put<{ Params: TokenIdParams; Body: CapBody }>(
    '/api/tokens/:id/monthly-api-calls',
    {
      config: { audit: { action: 'token.calls_capped', target: (r) => (r.params as TokenIdParams).id } },
      schema: {
        operationId: 'capTokenCalls',
        summary: "Cap an API token's calls a month",
        description: "Owner or admin; any member's token of the account. From the next second on every replica.",
        tags: ['usage'],
        params: TokenIdParams,
        body: CapBody,
        response: { 200: Type.Object({ tokenId: Type.String(), ...Cap }), ...errorResponses },
      },
    },
    async (request) => usage.capToken(userOf(request).accountId, request.params.id, request.body.monthlyApiCalls),
  );
}
