// GET /api/sessions: the caller's own web UI sessions (a person's, not the account's).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import { Session, tags } from './schemas.ts';
import type { PersonSessions } from './schemas.ts';

export function listSessionsRoute(app: FastifyInstance, sessions: PersonSessions) {
  app.get(
    '/api/sessions',
    {
      schema: {
        operationId: 'listSessions',
        summary: 'List your web sessions',
        description: 'Where you are signed in to the web UI: device, address, when it signed in and when it was last seen, the most recently seen first.',
        tags,
        response: { 200: Type.Object({ sessions: Type.Array(Session) }), 401: errorResponses[401] },
      },
    },
    async (request) => ({ sessions: await sessions.listSessions(userOf(request).id, request) }),
  );
}
