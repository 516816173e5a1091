// DELETE /api/account/invitations/{id}: its link stops working; another account's answers 404.
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { InvitationParams } from './schemas.ts';

export function revokeInvitationRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.delete<{ Params: InvitationParams }>(
    '/api/account/invitations/:id',
    {
      config: { audit: { action: 'member.invitation_revoked', target: (r) => (r.params as InvitationParams).id } },
      schema: {
        operationId: 'revokeInvitation',
        summary: 'Revoke an invitation',
        description: 'Owner or admin. An accepted invitation cannot be revoked (remove the member instead): 404.',
        tags: ['account'],
        params: InvitationParams,
        response: { 204: { type: 'null', description: 'Revoked.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await members.revokeInvitation(userOf(request).accountId, request.params.id);
      return reply.status(204).send();
    },
  );
}
