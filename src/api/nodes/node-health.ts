// GET /api/nodes/{id}/health: what the control plane knows of a node and what its daemon answers
// now (nodes/health/node-health.ts), in a second or two at most, however the daemon is doing.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { Build, errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { NODE_STATUSES } from '../../domain/nodes.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const NodeHealthBody = Type.Object({
  data: Type.Object({
    nodeId: Type.String(),
    status: Type.Union(NODE_STATUSES.map((s) => Type.Literal(s))),
    locked: Type.Boolean(),
    initialized: Type.Boolean(),
    imageVersion: Type.String({ description: 'The image version the node runs (rln_commit_id).' }),
    // The Build of the node's builds (presentBuild), currentPhase included: what a build under way is doing now.
    lastBuild: Type.Union([Type.Ref(Build), Type.Null()], { description: 'The most recent build, finished or not.' }),
    daemon: Type.Object(
      {
        checked: Type.Boolean({ description: 'False when the node is not RUNNING: no daemon was asked.' }),
        answering: Type.Boolean({ description: 'The daemon answered HTTP within 1.5 s (a locked RLN answers 403: that is up).' }),
        latencyMs: nullable(Type.Number()),
        httpStatus: nullable(Type.Integer()),
        error: nullable(Type.String({ description: 'Why it did not answer.' })),
        network: nullable(Type.String({ description: "From the daemon's /networkinfo, for an unlocked node." })),
        height: nullable(Type.Integer({ description: "The daemon's chain height, for an unlocked node." })),
      },
      { description: 'Asked now: /nodeinfo when locked, /networkinfo when unlocked.' },
    ),
    checkedAt: Type.String({ format: 'date-time' }),
  }),
});

export function nodeHealthRoute(app: FastifyInstance, { health }: ApiDeps) {
  app.get<{ Params: NodeIdParams }>(
    '/api/nodes/:id/health',
    {
      schema: {
        operationId: 'getNodeHealth',
        summary: "A node's health",
        description:
          "The control plane's view (status, lock, last build) and the daemon's, asked there and then (answering, latency, " +
          'chain height when unlocked). A daemon that does not answer within 1.5 s is reported as not answering; the ' +
          "request never waits longer. Another user's node answers 404.",
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: NodeHealthBody, ...errorResponses },
      },
    },
    async (request) => ({ data: await health.check(userOf(request).accountId, request.params.id) }),
  );
}
