// GET /api/account/transfer: the account's pending ownership offer, if there is one.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { Transfer } from './transfer-schemas.ts';

export function getTransferRoute(app: FastifyInstance, { transfers }: ApiDeps) {
  app.get(
    '/api/account/transfer',
    {
      schema: {
        operationId: 'getAccountTransfer',
        summary: "The account's pending ownership offer",
        description: 'Every member may read it; none pending answers 404 `transfer_not_found`.',
        tags: ['account'],
        response: { 200: Transfer, 401: errorResponses[401], 404: errorResponses[404] },
      },
    },
    async (request) => transfers.current(userOf(request).accountId),
  );
}
