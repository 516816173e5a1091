// POST /api/account/leave: the caller leaves their account. A user belongs to one account, so their
// user goes, as a removal does: tokens, web sessions, the certificates they issued, event streams
// and the invitations they made all end (MemberService.removeMember's path).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { AppError } from '../../errors.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

// Said out loud, so that no stray POST (a retried request, a misread client) deletes a person.
const LeaveBody = Type.Object({ confirm: Type.Literal(true, { description: 'Must be true: leaving deletes your user.' }) }, { additionalProperties: false });
type LeaveBody = Static<typeof LeaveBody> | undefined;

export function leaveAccountRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.post<{ Body: LeaveBody }>(
    '/api/account/leave',
    {
      config: { audit: { action: 'member.left', target: (r) => r.user?.id } },
      schema: {
        operationId: 'leaveAccount',
        summary: 'Leave the account',
        description:
          'Any member but the owner (403 `forbidden`: hand the account to an admin first, or delete it). Your user is deleted: every ' +
          'API token, web session and client certificate of yours stops working at once, your event streams end and the invitations ' +
          "you made are revoked; the nodes stay the account's.",
        tags: ['account'],
        body: LeaveBody,
        response: { 204: { type: 'null', description: 'You left; your credentials no longer work.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      // A POST without a body is not validated against the schema: it is no confirmation either.
      if (request.body?.confirm !== true) throw new AppError('invalid_request', 'send {"confirm": true} to leave the account', { field: 'confirm' });
      await members.leave(userOf(request));
      return reply.status(204).send();
    },
  );
}
