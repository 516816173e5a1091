// GET /api/nodes/{id}: one of the caller's nodes.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, Node, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export function getNodeRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.get<{ Params: NodeIdParams }>(
    '/api/nodes/:id',
    {
      schema: {
        summary: 'Read a node',
        description: "Another user's node answers 404, exactly like a missing one.",
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: Type.Object({ data: Type.Ref(Node) }), ...errorResponses },
      },
    },
    async (request) => ({ data: await nodes.getNode(userOf(request).id, request.params.id) }),
  );
}
