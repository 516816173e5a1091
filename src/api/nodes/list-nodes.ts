// GET /api/nodes: the caller's nodes with their build history. Without paging parameters it is
// the original service's shape, every node in `{nodes}`; with `limit` (and then `cursor`) it is
// one page, and `nextCursor` (null after the last page) asks for the next.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, Node, pageParams } from '../schemas.ts';
import { MAX_PAGE } from '../../domain/paging.ts';
import type { ApiDeps } from '../deps.ts';

const ListQuery = Type.Object(pageParams('Nodes', 'without it and without a cursor, every node'), { additionalProperties: false });
type ListQuery = Static<typeof ListQuery>;

export function listNodesRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.get<{ Querystring: ListQuery }>(
    '/api/nodes',
    {
      schema: {
        operationId: 'listNodes',
        summary: 'List your nodes with their builds',
        description:
          'Oldest first. Without `limit` every node (the original service\'s answer); with it, one page and `nextCursor`, ' +
          'to pass as `cursor` for the next page (null after the last). A page is stable while nodes are created. ' +
          'A token limited to some nodes (`nodeIds`) lists only those.',
        tags: ['nodes'],
        querystring: ListQuery,
        response: {
          200: Type.Object({ nodes: Type.Array(Type.Ref(Node)), nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
          400: errorResponses[400],
          401: errorResponses[401],
        },
      },
    },
    async (request, reply) => {
      // A token limited to some nodes sees only those.
      const { accountId, scope } = userOf(request);
      const { limit, cursor } = request.query;
      // Already the answer's JSON, in the 200 schema's shape and bytes (db/node-list-json.ts): a
      // string sent as application/json skips the serializer, so it is not parsed and written twice.
      const json =
        limit === undefined && cursor === undefined
          ? await nodes.listNodesJson(accountId, scope.nodeIds)
          : await nodes.listNodePageJson(accountId, limit === undefined ? MAX_PAGE : Number(limit), cursor, scope.nodeIds);
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );
}
