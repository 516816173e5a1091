// POST /api/account/transfer/accept: the admin the account was offered to takes it over; the
// previous owner stays as an admin. The account keeps its id: every node URL stays.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export function acceptTransferRoute(app: FastifyInstance, { transfers }: ApiDeps) {
  app.post(
    '/api/account/transfer/accept',
    {
      config: { audit: { action: 'account.transferred', target: (r) => r.user?.id } },
      schema: {
        operationId: 'acceptAccountTransfer',
        summary: 'Accept the account',
        description:
          'The admin it was offered to. You become the owner and the previous owner an admin, from the next request of either. ' +
          'Anyone else, or an offer withdrawn, expired, or made by someone no longer the owner, answers 404 `transfer_not_found`.',
        tags: ['account'],
        response: {
          200: Type.Object({ accountId: Type.String({ description: 'Unchanged.' }), previousOwner: Type.String({ description: 'Now an admin.' }) }),
          ...errorResponses,
        },
      },
    },
    async (request) => transfers.accept(userOf(request)),
  );
}
