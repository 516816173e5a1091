// GET /api/account/invitations: the account's invitations that can still be accepted (never their
// secrets), or with ?status=revoked the latest revoked ones: those revoked by hand and those that
// ended with their maker's removal or demotion below admin (accounts/members.ts).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { Invitation } from './schemas.ts';
import { REVOKED_INVITATIONS_LISTED } from '../../accounts/members.ts';

const InvitationsQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('revoked')], {
        description: `pending (the default): those that can still be accepted; revoked: the latest ${REVOKED_INVITATIONS_LISTED} revoked and never accepted, each with revokedAt.`,
      }),
    ),
  },
  { additionalProperties: false },
);
type InvitationsQuery = Static<typeof InvitationsQuery>;

export function listInvitationsRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.get<{ Querystring: InvitationsQuery }>(
    '/api/account/invitations',
    {
      schema: {
        operationId: 'listInvitations',
        summary: 'List pending (or revoked) invitations',
        description:
          'Oldest first; accepted, revoked and expired ones are left out. With `?status=revoked`, the latest ' +
          `${REVOKED_INVITATIONS_LISTED} revoked ones instead, latest first, with \`revokedAt\`: revoked by hand, or because the member ` +
          'who made them was removed or demoted below admin.',
        tags: ['account'],
        querystring: InvitationsQuery,
        response: { 200: Type.Object({ invitations: Type.Array(Invitation) }), 400: errorResponses[400], 401: errorResponses[401] },
      },
    },
    async (request) => ({ invitations: await members.listInvitations(userOf(request).accountId, request.query.status) }),
  );
}
