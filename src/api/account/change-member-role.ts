// PATCH /api/account/members/{userId}: a member's new role, in effect on their next request.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { InvitableRoleField, Member, MemberParams } from './schemas.ts';

const ChangeRoleBody = Type.Object({ role: InvitableRoleField }, { additionalProperties: false });
type ChangeRoleBody = Static<typeof ChangeRoleBody>;

export function changeMemberRoleRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.patch<{ Params: MemberParams; Body: ChangeRoleBody }>(
    '/api/account/members/:userId',
    {
      config: { audit: { action: 'member.role_changed', target: (r) => (r.params as MemberParams).userId } },
      schema: {
        operationId: 'changeMemberRole',
        summary: "Change a member's role",
        description:
          "Owner or admin. Never to or from owner: the owner's role cannot be changed (403 `forbidden`). The new role applies to the " +
          "member's next request with any credential (tokens, web sessions, the client certificates they issued); a demotion below admin " +
          'revokes the invitations they made.',
        tags: ['account'],
        params: MemberParams,
        body: ChangeRoleBody,
        response: { 200: Member, ...errorResponses },
      },
    },
    async (request) => members.changeRole(userOf(request).accountId, request.params.userId, request.body.role),
  );
}
