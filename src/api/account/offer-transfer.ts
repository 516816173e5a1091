// POST /api/account/transfer: the owner offers the account to one of its admins.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { OfferBody, Transfer } from './transfer-schemas.ts';

export function offerTransferRoute(app: FastifyInstance, { transfers }: ApiDeps) {
  app.post<{ Body: OfferBody }>(
    '/api/account/transfer',
    {
      config: { audit: { action: 'account.transfer_offered', target: (r) => (r.body as OfferBody | undefined)?.userId } },
      schema: {
        operationId: 'offerAccountTransfer',
        summary: 'Offer the account to an admin',
        description:
          'Owner. The admin accepts with `POST /api/account/transfer/accept`; until then nothing changes. A member who is not an admin ' +
          'is refused (409 `invalid_state`: make them an admin first); a user not in the account answers 404 `member_not_found`. A new ' +
          'offer replaces the previous one; an offer lasts seven days, and goes if its admin is removed or leaves.',
        tags: ['account'],
        body: OfferBody,
        response: { 201: Transfer, ...errorResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await transfers.offer(userOf(request), request.body.userId)),
  );
}
