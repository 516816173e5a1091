// DELETE /api/account/members/{userId}: removes a member, and the user with them (a user belongs
// to one account): their tokens, web sessions, client certificates and event streams stop working at
// once, and the invitations they made are revoked.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { MemberParams } from './schemas.ts';

export function removeMemberRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.delete<{ Params: MemberParams }>(
    '/api/account/members/:userId',
    {
      config: { audit: { action: 'member.removed', target: (r) => (r.params as MemberParams).userId } },
      schema: {
        operationId: 'removeMember',
        summary: 'Remove a member',
        description:
          'Owner or admin. The owner cannot be removed (403 `forbidden`). The member\'s API tokens, web sessions and client ' +
          "certificates stop working at once (a gateway of another replica may accept them for up to one second), their event streams end " +
          "within a second, and the invitations they made are revoked (listed with `?status=revoked`; their links answer 404); the nodes stay the account's.",
        tags: ['account'],
        params: MemberParams,
        response: { 204: { type: 'null', description: 'Removed.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await members.removeMember(userOf(request).accountId, request.params.userId);
      return reply.status(204).send();
    },
  );
}
