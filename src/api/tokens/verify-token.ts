// GET /api/verify: whether the API token sent is good, and whose it is. The original service's
// VSS server fork authenticates its customers with this call (`Authorization: <token>` or
// `Authorization: Bearer <token>`) and keys their storage by `sub`; the original answered its user
// id, which is the id of every account here that has not changed hands (the account id stays its
// creator's through a transfer, so a customer's VSS storage keeps its key).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export const VerifiedToken = Type.Object({
  sub: Type.String({ description: "the token's account: the `<user_id>` of its node URLs (the id of the user who created the account)" }),
});

export function verifyTokenRoute(app: FastifyInstance, _deps: ApiDeps) {
  app.get(
    '/api/verify',
    {
      schema: {
        operationId: 'verifyToken',
        summary: 'Check an API token',
        description:
          "200 with the token's account as `sub` when the API token sent (bare or after `Bearer `) is good; 401 otherwise. Only API tokens: a web session is refused. " +
          "Not counted against the monthly API calls (a service that checks its users' tokens, such as a VSS server, would otherwise spend them); the rate limits apply.",
        tags: ['tokens'],
        response: { 200: VerifiedToken, 401: errorResponses[401] },
      },
    },
    async (request) => {
      const { accountId, tokenId } = userOf(request);
      // A web session is the one credential without a token id: what is verified here is a token.
      if (tokenId === '') throw new AppError('unauthorized', 'send an API token: Authorization: Bearer <token>');
      return { sub: accountId };
    },
  );
}
