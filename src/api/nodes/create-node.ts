// POST /api/nodes: creates a node; it starts STARTING and a create build brings it to RUNNING.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NAME_PATTERN, Settings } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { idempotencyKeyOf } from '../idempotency-key.ts';

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
        description:
          'The node starts in STARTING; a create build brings it to RUNNING (locked, not initialised). ' +
          'With an `Idempotency-Key` header (1-255 printable characters), a retry with the same key and body within 24 hours ' +
          'gets the first answer (with `Idempotent-Replayed: true`) and creates nothing; the same key with another body is 409 `idempotency_conflict`. ' +
          '`settings.webhookUrl` follows the rules of POST /api/nodes/{id}/settings.',
        tags: ['nodes'],
        body: CreateNodeBody,
        response: { 200: CreateNodeResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, network, settings } = request.body;
      const idempotency = idempotencyKeyOf(request, request.body);
      // The service checks the webhook URL (scheme, credentials, target addresses) before it stores anything.
      const { body, replayed } = await nodes.createNode(userOf(request).id, { name, network, settings }, idempotency);
      if (replayed) reply.header('idempotent-replayed', 'true');
      return body;
    },
  );
}
