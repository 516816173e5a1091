// DELETE /api/sessions/{id}: ends one of the caller's web sessions at once (its next request is 401).
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { SessionParams, tags } from './schemas.ts';
import type { PersonSessions } from './schemas.ts';

export function endSessionRoute(app: FastifyInstance, sessions: PersonSessions) {
  app.delete<{ Params: SessionParams }>(
    '/api/sessions/:id',
    {
      config: { audit: { action: 'session.ended', target: (r) => (r.params as SessionParams).id } },
      schema: {
        operationId: 'endSession',
        summary: 'End one of your web sessions',
        description: "Your current session too (that is signing out). Another person's session answers 404 `session_not_found`, exactly like a missing one.",
        tags,
        params: SessionParams,
        response: { 204: { type: 'null', description: 'Ended.' }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await sessions.endSession(userOf(request).id, request.params.id);
      return reply.status(204).send();
    },
  );
}
