// GET /api/tokens: the caller's API tokens, without their secrets, with when each was last used.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NextCursor, pageParams } from '../schemas.ts';
import { MAX_PAGE } from '../../domain/paging.ts';
import { TokenScopeFields } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';

const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const ApiToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: nullableTime,
  expiresAt: nullableTime,
  revokedAt: nullableTime,
  ...TokenScopeFields,
});

const ListTokensQuery = Type.Object(pageParams('Tokens', 'default 200'), { additionalProperties: false });
type ListTokensQuery = Static<typeof ListTokensQuery>;

export function listTokensRoute(app: FastifyInstance, { accounts }: ApiDeps) {
  app.get<{ Querystring: ListTokensQuery }>(
    '/api/tokens',
    {
      schema: {
        operationId: 'listTokens',
        summary: 'List your API tokens',
        description: 'Oldest first, in pages. Revoked and expired tokens are listed too, so their last use stays visible.',
        tags: ['tokens'],
        querystring: ListTokensQuery,
        response: { 200: Type.Object({ tokens: Type.Array(ApiToken), nextCursor: NextCursor }), 400: errorResponses[400], 401: errorResponses[401] },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      return accounts.listTokenPage(userOf(request).id, limit === undefined ? MAX_PAGE : Number(limit), cursor);
    },
  );
}
