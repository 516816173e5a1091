// A token's scope as the token routes show it (docs/API.md "Token scopes"): in the answer of
// POST /api/tokens and in every token of GET /api/tokens; and as POST /api/tokens takes it.
import { Type } from '@sinclair/typebox';
import { MAX_SCOPE_NODES } from '../../accounts/token-scope.ts';
import { ID_PATTERN } from '../schemas.ts';

const AccessField = Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('gateway')], {
  description: '"api": only the management API; "gateway": only the bearer node gateway; "all": both.',
});

export const TokenScopeFields = {
  readOnly: Type.Boolean({ description: 'Only reads: GET on the management API, the read-only RLN routes through the bearer gateway.' }),
  nodeIds: Type.Union([Type.Array(Type.String({ pattern: ID_PATTERN })), Type.Null()], {
    description: 'The only nodes the token reaches; null: every node of its user.',
  }),
  access: AccessField,
};

/** The optional scope fields of POST /api/tokens: all left out, an unscoped token. */
export const TokenScopeRequest = {
  readOnly: Type.Optional(
    Type.Boolean({ description: 'Only reads: GET on the management API; through the bearer gateway only the read-only RLN routes (docs/API.md "Token scopes"). Default false.' }),
  ),
  nodeIds: Type.Optional(
    Type.Array(Type.String({ pattern: ID_PATTERN }), {
      minItems: 1,
      maxItems: MAX_SCOPE_NODES,
      description:
        'Only these of your nodes; left out, every node. A limited token lists only these nodes and cannot create nodes. ' +
        'An id that is not one of your nodes is a 400 naming it, the same for a missing node and another user\'s.',
    }),
  ),
  access: Type.Optional(AccessField),
};
