// GET /api/audit-events: the caller's own audit trail, newest first, in pages.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NextCursor, pageParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { AUDIT_ACTIONS } from '../../audit/audit-log.ts';

const AuditEvent = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.String({ description: 'token:<tokenId>, session (the web UI), gateway:bearer, gateway:mtls, invitation (a member joining), operator (the CLI) or service.' }),
  actorUserId: Type.Union([Type.String(), Type.Null()], { description: 'The member who acted (their user id); null for the operator, the service and events from before accounts.' }),
  actorEmail: Type.Union([Type.String(), Type.Null()], { description: "That member's email when they acted; kept after they are removed." }),
  sourceIp: Type.Union([Type.String(), Type.Null()], { description: 'Where the request came from, as this service saw it.' }),
  action: Type.String({ description: `One of ${AUDIT_ACTIONS.join(', ')}.` }),
  target: Type.Union([Type.String(), Type.Null()], { description: 'A node id, token id or name, certificate serial, backup id or email.' }),
  outcome: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
  details: Type.Record(Type.String(), Type.Unknown(), { description: 'For a failed attempt, the status and error code answered.' }),
});

const ListAuditQuery = Type.Object(pageParams('Events', 'default 50'), { additionalProperties: false });
type ListAuditQuery = Static<typeof ListAuditQuery>;

export function listAuditEventsRoute(app: FastifyInstance, { audit }: ApiDeps) {
  app.get<{ Querystring: ListAuditQuery }>(
    '/api/audit-events',
    {
      schema: {
        operationId: 'listAuditEvents',
        summary: 'Your audit trail',
        description:
          'Security-relevant actions on your resources, newest first: tokens created and revoked, certificates issued and ' +
          'revoked, unlock attempts (management API and both gateways) and their result, automatic unlock turned on or off ' +
          '(by you or by the service), destroys, backups, sign-ins to the web UI (failed ones too), invitations, members joining, role changes and removals. `actorEmail` says which member did it. A token limited to some ' +
          'nodes (`nodeIds`) reads only the events about those nodes.',
        tags: ['audit'],
        querystring: ListAuditQuery,
        response: { 200: Type.Object({ events: Type.Array(AuditEvent), nextCursor: NextCursor }), 400: errorResponses[400], 401: errorResponses[401] },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const user = userOf(request);
      // Like the event stream, a token limited to nodes sees only their part of the trail.
      return audit.list({ userId: user.accountId, nodeIds: user.scope.nodeIds, limit: limit === undefined ? 50 : Number(limit), cursor });
    },
  );
}
