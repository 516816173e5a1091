// POST /api/nodes/{id}/init with {password, mnemonic?}: creates the node's wallet (RLN's /init)
// from the management API, so a user of the web UI needs no token and no curl. Without a mnemonic
// it answers the new wallet's, which neither the node nor the service shows again; with one (a
// recovery phrase) the wallet is recovered from it and the phrase is not echoed. Either way the
// service never stores or logs it.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams, ErrorBody } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { withPasswordBodies } from './password-body.ts';

const InitBody = Type.Object(
  {
    password: Type.String({ minLength: 8, maxLength: 1024, description: "The wallet's password, 8 characters or more (never stored or logged)." }),
    mnemonic: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          "A recovery phrase (BIP39 words, RLN's `mnemonic`): recover that wallet (same node pubkey, same addresses) instead of " +
          'creating a new one. Never stored, logged or echoed. Only ever use it on one live node: see docs/API.md, "Recovery from a recovery phrase".',
      }),
    ),
  },
  { additionalProperties: false },
);
type InitBody = Static<typeof InitBody>;

const InitAnswer = Type.Object({
  data: Type.Object({
    mnemonic: Type.Optional(
      Type.String({ description: 'A new wallet\'s seed words: shown this once, kept by no one but the user. Absent when recovered from a given phrase.' }),
    ),
    recovered: Type.Boolean({ description: 'True when the wallet was recovered from the given mnemonic.' }),
  }),
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
            "Creates the wallet of a RUNNING node that has none (RLN's /init) and answers its mnemonic, once; with `mnemonic`, " +
            'recovers that wallet instead and answers no mnemonic (400 `invalid_request` when the node refuses the phrase). The node stays ' +
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
        const { password, mnemonic: given } = request.body;
        const { mnemonic } = await unlocker.initUserNode(userOf(request).accountId, request.params.id, password, given);
        if (given !== undefined) {
          return {
            data: { recovered: true },
            message:
              `The wallet of node ${request.params.id} is recovered from the recovery phrase; unlock it with the password. ` +
              'If the node this phrase came from still runs, stop or destroy it: two live nodes with one wallet can lose its channel funds.',
          };
        }
        return { data: { mnemonic, recovered: false }, message: `The wallet of node ${request.params.id} is initialised; write the mnemonic down now: it is not shown again` };
      },
    );
  });
}
