// DELETE /api/nodes with {destroyNodeId}: destroys a node (DESTROYING, then DESTROYED).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ID_PATTERN, MessageBody } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const DestroyNodeBody = Type.Object(
  { destroyNodeId: Type.String({ pattern: ID_PATTERN, description: 'The id of the node to destroy.' }) },
  { additionalProperties: false },
);
type DestroyNodeBody = Static<typeof DestroyNodeBody>;

export function destroyNodeRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.delete<{ Body: DestroyNodeBody }>(
    '/api/nodes',
    {
      config: { audit: { action: 'node.destroyed', target: (r) => (r.body as { destroyNodeId?: string } | undefined)?.destroyNodeId } },
      schema: {
        operationId: 'destroyNode',
        summary: 'Destroy a node',
        description: 'The daemon is stopped and its storage deleted; the record stays readable as DESTROYED for a while.',
        tags: ['nodes'],
        body: DestroyNodeBody,
        response: { 200: MessageBody, ...errorResponses },
      },
    },
    async (request) => {
      await nodes.destroyNode(userOf(request).accountId, request.body.destroyNodeId);
      return { message: `Node ${request.body.destroyNodeId} is being destroyed` };
    },
  );
}
