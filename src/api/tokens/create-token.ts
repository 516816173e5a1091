// POST /api/tokens: a new API token for the caller; the secret is in this response and nowhere else.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NAME_PATTERN } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { TokenScopeFields, TokenScopeRequest } from './schemas.ts';

const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: NAME_PATTERN, description: 'A label, e.g. where the token is used.' }),
    expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    ...TokenScopeRequest,
  },
  { additionalProperties: false },
);
type CreateTokenBody = Static<typeof CreateTokenBody>;

const CreateTokenResponse = Type.Object({
  data: Type.Object({
    id: Type.String(),
    name: Type.String(),
    token: Type.String({ description: 'The secret: shown only in this response.' }),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    ...TokenScopeFields,
  }),
  message: Type.String(),
});

export function createTokenRoute(app: FastifyInstance, { accounts }: ApiDeps) {
  app.post<{ Body: CreateTokenBody }>(
    '/api/tokens',
    {
      config: { audit: { action: 'token.created', target: (r) => (r.body as { name?: string } | undefined)?.name } },
      schema: {
        operationId: 'createToken',
        summary: 'Create an API token',
        description:
          'A token may be limited (docs/API.md "Token scopes"): `readOnly`, to some nodes (`nodeIds`), to one listener (`access`). ' +
          'A call outside its scope answers 403 `forbidden_scope`. A scoped token cannot create or revoke tokens, nor issue or revoke client certificates.',
        tags: ['tokens'],
        body: CreateTokenBody,
        response: { 200: CreateTokenResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { name, expiresInDays, readOnly, nodeIds, access } = request.body;
      const t = await accounts.createToken(userOf(request).email, name, expiresInDays, { readOnly, nodeIds, access });
      return {
        data: {
          id: t.id,
          name: t.name,
          token: t.token,
          createdAt: t.createdAt,
          expiresAt: t.expiresAt,
          readOnly: t.readOnly,
          nodeIds: t.nodeIds,
          access: t.access,
        },
        message: 'Copy the token now: it is not shown again',
      };
    },
  );
}
