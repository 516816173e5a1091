// POST /revoketoken {token}: revokes a whole token (every revocation identifier it carries), kept in
// the storage directory so it stays revoked after a restart. Like every route it needs a token
// allowing it (admin, or a custom one with right("api", "/revoketoken")); RLN looks at no node state.
import { RlnError } from '../errors.ts';
import type { Route } from '../route.ts';

export const revokeTokenRoute: Route = {
  method: 'POST',
  path: '/revoketoken',
  guard: 'none',
  jsonBody: true,
  handle({ tokens }, body) {
    if (!tokens) throw new RlnError('AuthenticationDisabled');
    tokens.revoke(body.requiredString('token'));
    return {};
  },
};
