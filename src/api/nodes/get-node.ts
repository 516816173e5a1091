// GET /api/nodes/{id}: one of the caller's nodes; with ?waitFor=<STATUS> it answers once the node
// has that status (or the timeout passed), so clients need not poll.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { NODE_STATUSES } from '../../domain/nodes.ts';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, Node, NodeIdParams, WAIT_SECONDS_PATTERN } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

export const MAX_WAIT_SECONDS = 60;
const DEFAULT_WAIT_SECONDS = 30;

const GetNodeQuery = Type.Object(
  {
    waitFor: Type.Optional(
      Type.Union(NODE_STATUSES.map((s) => Type.Literal(s)), {
        description: 'Answer once the node has this status (or is DESTROYED, or the timeout passed).',
      }),
    ),
    // A string: the API validates exactly what was sent and query values are strings.
    timeout: Type.Optional(
      Type.String({ pattern: WAIT_SECONDS_PATTERN, description: `Seconds to wait, 0-${MAX_WAIT_SECONDS} (more is refused); default ${DEFAULT_WAIT_SECONDS}.` }),
    ),
  },
  { additionalProperties: false },
);
type GetNodeQuery = Static<typeof GetNodeQuery>;

export function getNodeRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.get<{ Params: NodeIdParams; Querystring: GetNodeQuery }>(
    '/api/nodes/:id',
    {
      schema: {
        operationId: 'getNode',
        summary: 'Read a node',
        description:
          "Another user's node answers 404, exactly like a missing one. With `waitFor`, the answer comes when the node " +
          'reaches that status, when it is DESTROYED, or when `timeout` seconds passed, whichever is first; it is the node ' +
          'as it is then (compare its `status`).',
        tags: ['nodes'],
        params: NodeIdParams,
        querystring: GetNodeQuery,
        response: { 200: Type.Object({ data: Type.Ref(Node) }), ...errorResponses },
      },
    },
    async (request) => {
      const userId = userOf(request).accountId;
      const { waitFor, timeout } = request.query;
      if (!waitFor) return { data: await nodes.getNode(userId, request.params.id) };
      const seconds = Math.min(MAX_WAIT_SECONDS, timeout === undefined ? DEFAULT_WAIT_SECONDS : Number(timeout));
      const gone = new AbortController();
      request.raw.once('close', () => gone.abort());
      return { data: await nodes.waitForStatus(userId, request.params.id, waitFor, seconds * 1000, gone.signal) };
    },
  );
}
