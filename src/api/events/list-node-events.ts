// GET /api/nodes/{id}/events: a node's timeline, everything recorded about it (status and lock
// changes, upgrades, backups, log exports, test events), oldest first to follow it with `after`,
// or newest first for its recent history.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams, PAGE_LIMIT_PATTERN } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const DEFAULT_LIMIT = 50;

const TimelineQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: PAGE_LIMIT_PATTERN, description: `Events per page, 1-200 (default ${DEFAULT_LIMIT}).` })),
    after: Type.Optional(Type.String({ maxLength: 128, description: 'A cursor: nextCursor of the previous page, or the cursor of an event of this node.' })),
    order: Type.Optional(
      Type.Union([Type.Literal('oldest'), Type.Literal('newest')], {
        description: '`oldest` (default): oldest first, `after` goes forward in time; `newest`: newest first, `after` goes back in time.',
      }),
    ),
  },
  { additionalProperties: false },
);
type TimelineQuery = Static<typeof TimelineQuery>;

export function listNodeEventsRoute(app: FastifyInstance, { nodeEvents }: ApiDeps) {
  app.get<{ Params: NodeIdParams; Querystring: TimelineQuery }>(
    '/api/nodes/:id/events',
    {
      schema: {
        operationId: 'listNodeEvents',
        summary: "A node's events (its timeline)",
        description:
          'Everything recorded about the node, the events its webhooks carry, as long as the node record exists (also once DESTROYED). ' +
          'Follow it with `after=<nextCursor>`: nextCursor is the last event of the page (or the `after` you sent when nothing is new), ' +
          'null only when the node has no events and no `after` was sent; a page shorter than `limit` means you are up to date. ' +
          "A cursor of another user's event, of another node, or not one this service gave is a 400 invalid_request. " +
          'Events appear in the order their changes committed; to be told of them as they happen, use GET /api/events/stream.',
        tags: ['events'],
        params: NodeIdParams,
        querystring: TimelineQuery,
        response: {
          200: Type.Object({ events: Type.Array(Type.Ref('NodeEvent')), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
          400: errorResponses[400],
          401: errorResponses[401],
          404: errorResponses[404],
        },
      },
    },
    async (request) => {
      const { limit, after, order } = request.query;
      return nodeEvents.listNodeEvents(userOf(request).accountId, request.params.id, {
        limit: limit === undefined ? DEFAULT_LIMIT : Number(limit),
        after,
        order: order ?? 'oldest',
      });
    },
  );
}
