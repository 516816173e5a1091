// POST /api/nodes/{id}/start, /stop and /upgrade: each begins a build and answers at once; the
// node's status (or GET /api/nodes/{id}?waitFor=...) shows when it completes.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, MessageBody, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';

const NodeActionResponse = Type.Object({
  message: Type.String(),
  data: Type.Object({
    nodeId: Type.String(),
    status: Type.String({ description: "The node's status right after the request was accepted." }),
  }),
});

const conflicts =
  '409 when the request does not fit the node: `already_running`, `already_stopped`, `build_in_progress`, `node_destroyed`.';

export function nodeActionRoutes(app: FastifyInstance, { nodes }: ApiDeps) {
  app.post<{ Params: NodeIdParams }>(
    '/api/nodes/:id/start',
    {
      schema: {
        operationId: 'startNode',
        summary: 'Start a node',
        description:
          'Starts a PAUSED or FAILED node: STARTING, then RUNNING, locked (unlock it through the node API). ' +
          'A node of a Scale or Wallet user comes up on the latest image version. ' + conflicts,
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: NodeActionResponse, ...errorResponses },
      },
    },
    async (request) => {
      const data = await nodes.startNode(userOf(request).accountId, request.params.id);
      return { message: `Node ${data.nodeId} is starting`, data };
    },
  );

  app.post<{ Params: NodeIdParams }>(
    '/api/nodes/:id/stop',
    {
      schema: {
        operationId: 'stopNode',
        summary: 'Stop a node',
        description:
          "Stops the node's daemon and keeps its storage; the node is PAUSED once the stop build completes. " + conflicts,
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: NodeActionResponse, ...errorResponses },
      },
    },
    async (request) => {
      const data = await nodes.stopNode(userOf(request).accountId, request.params.id);
      return { message: `Node ${data.nodeId} is stopping`, data };
    },
  );

  app.post<{ Params: NodeIdParams }>(
    '/api/nodes/:id/upgrade',
    {
      schema: {
        operationId: 'upgradeNode',
        summary: 'Upgrade a node to the latest image version',
        description:
          'The node is IN_PROGRESS and locked while its image is replaced, then RUNNING, still locked, on the new version. ' +
          'If the new version does not come up healthy the node is rolled back to its previous version and the build is a FAILURE with the reason. ' +
          '409 `nothing_to_upgrade` when it already runs the latest version; `node_not_running` for a PAUSED node; ' +
          '`build_in_progress`, `node_destroyed`.',
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: MessageBody, ...errorResponses },
      },
    },
    async (request) => {
      const { nodeId, fromVersion, toVersion } = await nodes.upgradeNode(userOf(request).accountId, request.params.id);
      return { message: `Node ${nodeId} is being upgraded from ${fromVersion} to ${toVersion}` };
    },
  );
}
