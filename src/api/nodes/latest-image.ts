// GET /api/nodes/latest-rln-image: the latest image version; compare with a node's rln_commit_id.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export function latestImageRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.get(
    '/api/nodes/latest-rln-image',
    {
      schema: {
        operationId: 'getLatestRlnImage',
        summary: 'The latest node image version',
        tags: ['nodes'],
        response: { 200: Type.Object({ data: Type.String() }), 401: errorResponses[401] },
      },
    },
    async () => ({ data: await nodes.latestImageVersion() }),
  );
}
