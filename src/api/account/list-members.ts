// GET /api/account/members: everyone in the caller's account, the owner first.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { Member } from './schemas.ts';

export function listMembersRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.get(
    '/api/account/members',
    {
      schema: {
        operationId: 'listMembers',
        summary: "List the account's members",
        tags: ['account'],
        response: { 200: Type.Object({ members: Type.Array(Member) }), 401: errorResponses[401] },
      },
    },
    async (request) => ({ members: await members.listMembers(userOf(request).accountId) }),
  );
}
