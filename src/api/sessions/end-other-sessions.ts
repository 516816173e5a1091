// DELETE /api/sessions: ends every web session of the caller but the one the request came with.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { tags } from './schemas.ts';
import type { PersonSessions } from './schemas.ts';

export function endOtherSessionsRoute(app: FastifyInstance, sessions: PersonSessions) {
  app.delete(
    '/api/sessions',
    {
      config: { audit: { action: 'session.others_ended' } },
      schema: {
        operationId: 'endOtherSessions',
        summary: 'End all your other web sessions',
        description: 'Signs you out everywhere else. Called with an API token (which is no session), it ends every web session of yours.',
        tags,
        response: { 200: Type.Object({ ended: Type.Integer({ description: 'How many sessions ended.' }) }), ...errorResponses },
      },
    },
    async (request) => ({ ended: await sessions.endOtherSessions(userOf(request).id, request) }),
  );
}
