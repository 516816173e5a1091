// DELETE /api/account/transfer: the owner withdraws their offer.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export function withdrawTransferRoute(app: FastifyInstance, { transfers }: ApiDeps) {
  app.delete(
    '/api/account/transfer',
    {
      config: { audit: { action: 'account.transfer_withdrawn' } },
      schema: {
        operationId: 'withdrawAccountTransfer',
        summary: 'Withdraw the ownership offer',
        description: 'Owner. None pending answers 404 `transfer_not_found`.',
        tags: ['account'],
        response: { 204: { type: 'null', description: 'Withdrawn.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await transfers.withdraw(userOf(request));
      return reply.status(204).send();
    },
  );
}
