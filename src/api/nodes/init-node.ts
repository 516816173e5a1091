// POST /api/nodes/{id}/init with {password}: creates the node's wallet (RLN's /init) from the
// management API, so a user of the web UI needs no token and no curl. Answers the mnemonic, which
// neither the node nor the service shows again: the service never stores or logs it.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams, ErrorBody } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { withPasswordBodies } from './password-body.ts';

const InitBody = Type.Object(
  {
    password: Type.String({ minLength: 8, maxLength: 1024, description: "The wallet's password, 8 characters or more (never stored or logged)." }),
  },
  { additionalProperties: false },
);
type InitBody = Static<typeof InitBody>;

const InitAnswer = Type.Object({
  data: Type.Object({ mnemonic: Type.String({ description: 'The wallet seed words: shown this once, kept by no one but the user.' }) }),
  message: Type.String(),
});

export function initNodeRoute(app: FastifyInstance, { unlocker }: ApiDeps) {
  withPasswordBodies(app, (scope) => {
    scope.post<{ Params: NodeIdParams; Body: InitBody }>(
      '/api/nodes/:id/init',
      {
        schema: {
          operationId: 'initNode',
          summary: "Initialise a node's wallet",
          description:
            "Creates the wallet of a RUNNING node that has none (RLN's /init) and answers its mnemonic, once. The node stays " +
            'locked: unlock it with the same password. 409 `node_state_conflict` when it is initialised already; 409 ' +
            '`node_not_running`; 502 `node_unreachable`, `node_error`; 504 `node_timeout`.',
          tags: ['nodes'],
          params: NodeIdParams,
          body: InitBody,
          response: { 200: InitAnswer, ...errorResponses, 502: Type.Ref(ErrorBody), 504: Type.Ref(ErrorBody) },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const { mnemonic } = await unlocker.initUserNode(userOf(request).id, request.params.id, request.body.password);
        return { data: { mnemonic }, message: `The wallet of node ${request.params.id} is initialised; write the mnemonic down now: it is not shown again` };
      },
    );
  });
}
