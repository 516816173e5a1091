// GET /api/tokens: the caller's API tokens, without their secrets, with when each was last used.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const ApiToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: nullableTime,
  expiresAt: nullableTime,
  revokedAt: nullableTime,
});

export function listTokensRoute(app: FastifyInstance, { accounts }: ApiDeps) {
  app.get(
    '/api/tokens',
    {
      schema: {
        operationId: 'listTokens',
        summary: 'List your API tokens',
        description: 'Revoked and expired tokens are listed too, so their last use stays visible.',
        tags: ['tokens'],
        response: { 200: Type.Object({ tokens: Type.Array(ApiToken) }), 401: errorResponses[401] },
      },
    },
    async (request) => ({ tokens: await accounts.listTokens(userOf(request).email) }),
  );
}
