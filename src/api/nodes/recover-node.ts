// POST /api/nodes/{id}/recover: a node whose storage was lost (STORAGE_LOST) comes up on a fresh,
// empty volume. Owner or admin only (api/route-roles.ts): the old volume's remains are removed for
// good. The node comes up not initialised; its owner initialises it with their mnemonic through the
// node path (POST /init) or POST /api/nodes/{id}/init, and unlocks it.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';

const RecoverNodeResponse = Type.Object({
  message: Type.String(),
  data: Type.Object({
    nodeId: Type.String(),
    status: Type.String({ description: "The node's status right after the request was accepted: STARTING." }),
  }),
});

export function recoverNodeRoute(app: FastifyInstance, { nodes }: ApiDeps) {
  app.post<{ Params: NodeIdParams }>(
    '/api/nodes/:id/recover',
    {
      config: { audit: { action: 'node.recovered', target: nodeParam } },
      schema: {
        operationId: 'recoverNode',
        summary: 'Recover a node whose storage was lost',
        description:
          'For a STORAGE_LOST node (its volume is gone: see NODE_STORAGE_LOST). Owner or admin only. A `recover` build stops the old ' +
          'daemon and waits until it is gone, removes what is left of the old volume, and starts the daemon on a fresh, empty one: ' +
          'STARTING, then RUNNING, locked and not initialised (initialized: false), automatic unlock off. Initialise it with the ' +
          "wallet's mnemonic (POST /init with `mnemonic` through the node path, or POST /api/nodes/{id}/init) and unlock it; the " +
          'same mnemonic gives the same node pubkey. 409 `storage_not_lost` unless the node is STORAGE_LOST; `build_in_progress`, ' +
          '`node_superseded`, `node_exported`, `node_destroyed`.',
        tags: ['nodes'],
        params: NodeIdParams,
        response: { 200: RecoverNodeResponse, ...errorResponses },
      },
    },
    async (request) => {
      const data = await nodes.recoverNode(userOf(request).accountId, request.params.id);
      return { message: `Node ${data.nodeId} is being recovered on a fresh volume`, data };
    },
  );
}
