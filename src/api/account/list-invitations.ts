// GET /api/account/invitations: the account's invitations that can still be accepted (never their secrets).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { Invitation } from './schemas.ts';

export function listInvitationsRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.get(
    '/api/account/invitations',
    {
      schema: {
        operationId: 'listInvitations',
        summary: 'List pending invitations',
        description: 'Oldest first; accepted, revoked and expired ones are left out.',
        tags: ['account'],
        response: { 200: Type.Object({ invitations: Type.Array(Invitation) }), 401: errorResponses[401] },
      },
    },
    async (request) => ({ invitations: await members.listInvitations(userOf(request).accountId) }),
  );
}
