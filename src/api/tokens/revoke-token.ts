// DELETE /api/tokens/{id}: revokes one of the caller's tokens at once (the next request with it is 401).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { AppError } from '../../errors.ts';
import { errorResponses, ID_PATTERN } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const TokenIdParams = Type.Object({ id: Type.String({ pattern: ID_PATTERN, description: 'Token id: 32 lowercase hex characters.' }) });
type TokenIdParams = Static<typeof TokenIdParams>;

export function revokeTokenRoute(app: FastifyInstance, { accounts }: ApiDeps) {
  app.delete<{ Params: TokenIdParams }>(
    '/api/tokens/:id',
    {
      config: { audit: { action: 'token.revoked', target: (r) => (r.params as { id: string }).id } },
      schema: {
        operationId: 'revokeToken',
        summary: 'Revoke an API token',
        description: "Another user's token answers 404, exactly like a missing one.",
        tags: ['tokens'],
        params: TokenIdParams,
        response: { 200: Type.Object({ message: Type.String(), revokedAt: Type.String({ format: 'date-time' }) }), ...errorResponses },
      },
    },
    async (request) => {
      const { id } = request.params;
      // AccountService.revokeToken is the operator's (any user's token); only the caller's own here.
      const own = await accounts.listTokens(userOf(request).email);
      if (!own.some((t) => t.id === id)) throw new AppError('token_not_found', `token ${id} was not found`);
      const { revokedAt } = await accounts.revokeToken(id);
      return { message: `Token ${id} is revoked`, revokedAt };
    },
  );
}
