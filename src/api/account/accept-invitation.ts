// POST /api/account/invitations/accept: public, the invitation's secret is the credential. Creates
// the invited user with a password, a member of the inviting account; they then sign in, once
// their address is verified (at once when the invitation was emailed to it).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { InvitableRoleField } from './schemas.ts';

const AcceptBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'The secret of the invitation link (after `#token=`).' }),
    password: Type.String({ minLength: 8, maxLength: 1024, description: "The new member's password for the web UI." }),
  },
  { additionalProperties: false },
);
type AcceptBody = Static<typeof AcceptBody>;

const AcceptResponse = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  accountId: Type.String({ description: "The account joined: its id is the `<user_id>` in its nodes' URLs." }),
  role: InvitableRoleField,
  emailVerified: Type.Boolean({
    description: 'True when the invitation was emailed to this address, which accepting it proves. False for a link passed on by hand: a verification link was emailed, and signing in waits for it (403 `email_not_verified`).',
  }),
});

export function acceptInvitationRoute(app: FastifyInstance, { members, audit }: Pick<ApiDeps, 'members' | 'audit'>) {
  app.post<{ Body: AcceptBody }>(
    '/api/account/invitations/accept',
    {
      schema: {
        operationId: 'acceptInvitation',
        summary: 'Accept an invitation',
        description:
          'No bearer token: the secret in the link is the credential, good once and for 7 days. An unknown, used, revoked ' +
          'or expired one answers 404 `invitation_not_found`; 409 `user_exists` when the email already has a user. Failed ' +
          'accepts are limited per client address and per link (429 `rate_limited`); 503 `server_busy` when too many ' +
          'passwords are being hashed at once. Both with `Retry-After`.',
        tags: ['account'],
        security: [],
        body: AcceptBody,
        response: { 201: AcceptResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      // The client's address behind a trusted proxy (TRUSTED_PROXIES, Fastify's trustProxy).
      const address = request.ip;
      const { invitationId, ...joined } = await members.accept(request.body, address);
      // Outside the bearer scope, so recorded here: the new member is both the actor and the target.
      await audit.record({
        userId: joined.accountId,
        actor: 'invitation',
        actorUserId: joined.userId,
        actorEmail: joined.email,
        sourceIp: address,
        action: 'member.joined',
        target: invitationId,
        outcome: 'succeeded',
        details: { role: joined.role },
      });
      return reply.status(201).send(joined);
    },
  );
}
