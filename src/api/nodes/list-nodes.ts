// GET /api/nodes: the caller's nodes with their build history.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, Node } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export function listNodesRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.get(
    '/api/nodes',
    {
      schema: {
        summary: 'List your nodes with their builds',
        tags: ['nodes'],
        response: { 200: Type.Object({ nodes: Type.Array(Type.Ref(Node)) }), 401: errorResponses[401] },
      },
    },
    async (request) => ({ nodes: await nodes.listNodes(userOf(request).id) }),
  );
}
