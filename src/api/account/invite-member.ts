// POST /api/account/invitations: invites someone into the caller's account with a role. With SMTP
// the one-time link is emailed to the invitee and is not in the answer; without, the answer carries
// it (shown this once) for the inviter to pass on.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { Invitation, InvitableRoleField } from './schemas.ts';

const InviteBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320, description: 'Who is invited: the new member signs in with it.' }),
    role: InvitableRoleField,
  },
  { additionalProperties: false },
);
type InviteBody = Static<typeof InviteBody>;

const InviteResponse = Type.Composite([
  Invitation,
  Type.Object({
    emailed: Type.Boolean({ description: 'The link was emailed to the invitee (the service sends email): it is not in this answer, and accepting it verifies their address.' }),
    invitationUrl: Type.Optional(
      Type.String({ description: "Only when not emailed: the web UI's page that accepts it, with the one-time secret, shown only in this answer. Whoever joins through it verifies their address by email before signing in." }),
    ),
  }),
]);

export function inviteMemberRoute(app: FastifyInstance, { members }: ApiDeps) {
  app.post<{ Body: InviteBody }>(
    '/api/account/invitations',
    {
      config: { audit: { action: 'member.invited', target: (r) => (r.body as { email?: string } | undefined)?.email } },
      schema: {
        operationId: 'inviteMember',
        summary: 'Invite a member',
        description:
          'Owner or admin. The link is valid for 7 days and once. When the service sends email (SMTP_URL) it goes to the ' +
          'invitee and the answer has `emailed: true` and no link; otherwise the answer carries `invitationUrl` to pass on. Members plus pending invitations may not pass the plan\'s ' +
          'user limit (403 `plan_limit_reached`, details `{limit: "users", max, used, plan}`). 409 `user_exists` when the email ' +
          'already has a user: a user belongs to one account.',
        tags: ['account'],
        body: InviteBody,
        response: { 201: InviteResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const invitation = await members.invite(userOf(request), request.body);
      return reply.status(201).header('cache-control', 'no-store').send(invitation);
    },
  );
}
