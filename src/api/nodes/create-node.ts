// POST /api/nodes: creates a node; it starts STARTING and a create build brings it to RUNNING.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NAME_PATTERN, Settings } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const CreateNodeBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: NAME_PATTERN, description: '1-64 printable characters.' }),
    network: Type.Union([Type.Literal('regtest'), Type.Literal('testnet')]),
    settings: Type.Optional(Settings),
  },
  { additionalProperties: false },
);
type CreateNodeBody = Static<typeof CreateNodeBody>;

const CreateNodeResponse = Type.Object({
  data: Type.Object({
    nodeId: Type.String(),
    name: Type.String(),
    network: Type.String(),
    status: Type.Literal('STARTING'),
  }),
  message: Type.String(),
});

export function createNodeRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.post<{ Body: CreateNodeBody }>(
    '/api/nodes',
    {
      schema: {
        summary: 'Create a node',
        description: 'The node starts in STARTING; a create build brings it to RUNNING (locked, not initialised).',
        tags: ['nodes'],
        body: CreateNodeBody,
        response: { 200: CreateNodeResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { name, network, settings } = request.body;
      const node = await nodes.createNode(userOf(request).id, { name, network, settings });
      return {
        data: { nodeId: node.id, name: node.name, network: node.network, status: 'STARTING' as const },
        message: `Node ${node.name} is being created`,
      };
    },
  );
}
