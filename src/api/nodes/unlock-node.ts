// POST /api/nodes/{id}/unlock with RLN's unlock body (either form), plus network? and node_endpoint?
// (as the original hosted service's clients send them): the same
// unlock as the node gateway's, for the management API (and the web UI's Unlock button). The
// node's refusal becomes a management error: wrong_password, node_state_conflict, ...
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams, ErrorBody } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';
import { withPasswordBodies } from './password-body.ts';
import { ADDRESS_PATTERN, parseUnlockInput } from '../../rln/unlock-body.ts';

const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Visible = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, pattern: '^[\\x21-\\x7e]+$', description });
const BitcoindFields = {
  bitcoind_rpc_username: Type.Optional(Type.String({ maxLength: 256, description: 'bitcoind RPC user the node syncs from.' })),
  bitcoind_rpc_password: Type.Optional(Type.String({ maxLength: 1024, description: 'Its RPC password (sent only to the node, never stored or logged).' })),
  bitcoind_rpc_host: Type.Optional(Visible(253, 'bitcoind RPC host.')),
  bitcoind_rpc_port: Type.Optional(Port),
};

// RLN's unlock body in both its forms (the flat one and the current one with ldk_chain_sync),
// every field of it; unlock-body.ts checks what a schema cannot say (one form at a time).
const UnlockBody = Type.Object(
  {
    password: Type.String({ minLength: 1, maxLength: 1024, description: "The node's wallet password (never stored or logged)." }),
    // Its control characters are refused by parseUnlockInput, whose message names the field.
    announce_alias: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
    announce_addresses: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256, pattern: ADDRESS_PATTERN }), { maxItems: 16 })),
    ...BitcoindFields,
    indexer_url: Type.Optional(Visible(2048, 'The electrum indexer (e.g. `tcp://host:50001` or `host:50001`).')),
    proxy_endpoint: Type.Optional(Visible(2048, 'The RGB proxy (flat form).')),
    ldk_chain_sync: Type.Optional(
      Type.Union([
        Type.Object({ mode: Type.Literal('BlockSync'), config: Type.Object(BitcoindFields, { additionalProperties: false }) }, { additionalProperties: false }),
        Type.Object(
          { mode: Type.Literal('TransactionSync'), config: Type.Object({ indexer_url: Type.Optional(Visible(2048, 'The indexer to sync from.')) }, { additionalProperties: false }) },
          { additionalProperties: false },
        ),
      ], { description: "RLN's current form of the chain settings." }),
    ),
    network: Type.Optional(Type.String({ maxLength: 16, description: "Clients of the original service send the node's network: checked against it (400 when it differs)." })),
    node_endpoint: Type.Optional(Type.String({ maxLength: 2048, description: 'Sent by clients of the original service; accepted and ignored (the service knows where its node is).' })),
  },
  {
    additionalProperties: false,
    description:
      "RLN's unlock body, flat or current form. Chain settings the client sends are what its node gets (unless the operator set " +
      'UNLOCK_CHAIN_SETTINGS=operator); what it leaves out comes from the operator\'s settings for the network.',
  },
);
type UnlockBody = Static<typeof UnlockBody>;

const UnlockAnswer = Type.Object({
  message: Type.String(),
  warnings: Type.Optional(
    Type.Array(
      Type.Object({
        code: Type.Literal('identity_shared'),
        message: Type.String(),
      }),
      {
        description:
          'Present when the unlock succeeded but something needs the user: `identity_shared`, another live node of the service reports ' +
          "this node's pubkey (one wallet on two nodes, from a recovery phrase or a backup used twice): stop or destroy all but one.",
      },
    ),
  ),
});

export function unlockNodeRoute(app: FastifyInstance, { unlocker }: ApiDeps) {
  withPasswordBodies(app, (scope) => {
    scope.post<{ Params: NodeIdParams; Body: UnlockBody }>(
      '/api/nodes/:id/unlock',
      {
        config: { audit: { action: 'node.unlock', target: nodeParam } },
        schema: {
          operationId: 'unlockNode',
          summary: 'Unlock a node',
          description:
            'Unlocks a RUNNING, locked node with RLN\'s unlock body; the service fills in the chain-sync, indexer and proxy settings ' +
            'the body leaves out from those of the network. 403 `wrong_password`; 409 `node_not_running`, `node_state_conflict` (already unlocked, not ' +
            'initialized); 502 `node_unreachable`, `node_error`; 504 `node_timeout`.',
          tags: ['nodes'],
          params: NodeIdParams,
          body: UnlockBody,
          response: { 200: UnlockAnswer, ...errorResponses, 403: Type.Ref(ErrorBody), 502: Type.Ref(ErrorBody), 504: Type.Ref(ErrorBody) },
        },
      },
      async (request) => {
        const { warnings } = await unlocker.unlockUserNode(userOf(request).accountId, request.params.id, parseUnlockInput(request.body));
        return { message: `Node ${request.params.id} is unlocked`, ...(warnings.length ? { warnings } : {}) };
      },
    );
  });
}
