// What an API token may do, fixed when it is created: only read, only some nodes, only one of the
// two listeners (the management API, the node gateways). Each listener enforces it in one place:
// api/bearer-auth.ts (routes classified by api/route-scope.ts) and gateway/node-access.ts (RLN
// routes classified by gateway/route-scope.ts). Web sessions and client certificates are unscoped.
import { AppError } from '../errors.ts';

export const TOKEN_ACCESS = ['all', 'api', 'gateway'] as const;
export type TokenAccess = (typeof TOKEN_ACCESS)[number];

export interface TokenScope {
  readOnly: boolean;
  /** The nodes the token may reach; null: every node of its user. */
  nodeIds: readonly string[] | null;
  access: TokenAccess;
}

export const UNSCOPED: TokenScope = Object.freeze({ readOnly: false, nodeIds: null, access: 'all' });

/** Whether the token is limited in any way (a limited token may not create or revoke tokens). */
export const isScoped = (scope: TokenScope) => scope.readOnly || scope.nodeIds !== null || scope.access !== 'all';

export const allowsNode = (scope: TokenScope, nodeId: string) => scope.nodeIds === null || scope.nodeIds.includes(nodeId);

export const forbiddenScope = (message: string) => new AppError('forbidden_scope', message);

/** Refuses a token that is not for `listener`. */
export function requireListener(scope: TokenScope, listener: 'api' | 'gateway') {
  if (scope.access !== 'all' && scope.access !== listener) {
    throw forbiddenScope(
      listener === 'api' ? 'this API token is limited to the node gateways (access "gateway")' : 'this API token is limited to the management API (access "api")',
    );
  }
}

/** The most node ids one token may name: a scope is a short list, not a copy of the account. */
export const MAX_SCOPE_NODES = 100;
