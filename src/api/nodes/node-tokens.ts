// Customers' own node tokens (issue #40, point 4): POST /api/nodes/{id}/node-tokens mints a Biscuit
// of the node's root key following RLN's rules (shown once, never stored in clear), GET lists them
// without the token, DELETE .../{tokenId} revokes one (the gateway refuses it at once; the node is
// told with RLN's POST /revoketoken, and again after each unlock).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, ErrorBody, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('read-only'), Type.Literal('custom')], {
  description: "RLN's role: admin calls every route, read-only RLN's read-only routes, custom the routes listed.",
});

const MintBody = Type.Object(
  {
    role: Type.String({ description: 'admin, read-only or custom (RLN\'s roles); anything else is 400 invalid_request.' }),
    routes: Type.Optional(
      Type.Array(Type.String({ maxLength: 65 }), { maxItems: 100, description: 'A custom token\'s routes as RLN names them ("/nodeinfo"); only for role custom.' }),
    ),
    expiresAt: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601 time, in the future and within 366 days; default 30 days from now.' })),
  },
  { additionalProperties: false },
);
type MintBody = Static<typeof MintBody>;

export const NodeToken = Type.Object({
  id: Type.String(),
  nodeId: Type.String(),
  role: Role,
  routes: Type.Array(Type.String(), { description: "A custom token's routes; empty for the others." }),
  expiresAt: Type.String({ format: 'date-time' }),
  createdAt: Type.String({ format: 'date-time' }),
  mintedBy: Type.String({ description: 'The member who minted it: its calls count as theirs, and it is capped by their role.' }),
  revocationIds: Type.Array(Type.String(), { description: "The token's revocation identifiers (hex), as RLN's revoked list holds them." }),
  status: Type.Union([Type.Literal('valid'), Type.Literal('expired'), Type.Literal('revoked')]),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revokedReason: Type.Union([Type.Literal('revoked'), Type.Literal('minter_role'), Type.Null()], {
    description: 'revoked: by a member; minter_role: its minter was demoted below it or removed.',
  }),
});

const MintedNodeToken = Type.Object({
  data: Type.Intersect([
    NodeToken,
    Type.Object({
      token: Type.String({ description: 'The Biscuit (base64url). Shown only here: the service keeps it sealed, never in clear. Send it as `Authorization: Bearer <token>`.' }),
      nodeUrl: Type.String({ description: 'The node through the bearer gateway: append a route, e.g. nodeinfo.' }),
    }),
  ]),
  message: Type.String(),
});

const TokenParams = Type.Object({
  id: NodeIdParams.properties.id,
  tokenId: Type.String({ maxLength: 64 }),
});
type TokenParams = Static<typeof TokenParams>;

export function nodeTokenRoutes(app: FastifyInstance, { nodeTokens }: ApiDeps) {
  app.post<{ Params: NodeIdParams; Body: MintBody }>(
    '/api/nodes/:id/node-tokens',
    {
      config: { audit: { action: 'node_token.minted', target: nodeParam } },
      schema: {
        operationId: 'mintNodeToken',
        summary: 'Mint a node token (an RLN Biscuit) for the node',
        description:
          "A Biscuit signed with the node's root key, holding RLN's facts (role, and right(\"api\", route) for a custom token) and an expiry; " +
          'the bearer gateway checks it and passes it on, and so does the node itself. Shown once. Capped by the minter\'s role: a viewer or a ' +
          'read-only API token cannot mint (403 `forbidden_role` / `forbidden_scope`); a minter later demoted to viewer loses every token above ' +
          'read-only, a removed minter all of them. 400 `invalid_request` (details.field: role, routes, expiresAt); 409 `node_destroyed`, ' +
          '`node_state_conflict` (a node from before root keys, until its next start).',
        tags: ['node tokens'],
        params: NodeIdParams,
        body: MintBody,
        response: { 200: MintedNodeToken, ...errorResponses, 409: Type.Ref(ErrorBody) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const minted = await nodeTokens.mint(userOf(request), request.params.id, request.body);
      return { data: minted, message: `Node token ${minted.id} (${minted.role}) minted; it is shown only now` };
    },
  );

  app.get<{ Params: NodeIdParams }>(
    '/api/nodes/:id/node-tokens',
    {
      schema: {
        operationId: 'listNodeTokens',
        summary: "List a node's node tokens",
        description: 'Newest first (at most 500), revoked and expired ones too; never the token itself.',
        tags: ['node tokens'],
        params: NodeIdParams,
        response: { 200: Type.Object({ data: Type.Array(NodeToken) }), ...errorResponses },
      },
    },
    async (request) => ({ data: await nodeTokens.list(userOf(request).accountId, request.params.id) }),
  );

  app.delete<{ Params: TokenParams }>(
    '/api/nodes/:id/node-tokens/:tokenId',
    {
      config: { audit: { action: 'node_token.revoked', target: (r) => (r.params as { tokenId: string }).tokenId } },
      schema: {
        operationId: 'revokeNodeToken',
        summary: 'Revoke a node token',
        description:
          'The bearer gateway refuses it from the next request on; the node is sent RLN\'s POST /revoketoken with the whole token now if it is ' +
          'running, and again after each of its unlocks (its own list may be lost with a restart onto a fresh volume). Revoking twice keeps the first time. ' +
          '404 `not_found` for a token not of this node.',
        tags: ['node tokens'],
        params: TokenParams,
        response: { 200: Type.Object({ data: NodeToken, message: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const data = await nodeTokens.revoke(userOf(request).accountId, request.params.id, request.params.tokenId);
      return { data, message: `Node token ${data.id} is revoked` };
    },
  );
}
