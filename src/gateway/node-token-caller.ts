// A bearer-gateway caller presenting a customer's node token (issue #40, point 4) instead of an API
// token. Told apart without a lookup: an API token has its own prefix (auth/tokens.ts), a Biscuit is
// long base64url. Everything is checked before the node is reached: signature with the root key of
// the node the path names (so another node's token fails), the service's record of it, expiry,
// revocation and its minter's role now (secrets/customer-node-tokens.ts); then RLN's rules for the
// route, because some of a node's paths the service answers itself with its own admin Biscuit (the
// unlock, init, the status document), where the node would never see the customer's token.
import type { AuthenticatedUser } from '../accounts/service.ts';
import { forbiddenScope } from '../accounts/token-scope.ts';
import type { Node } from '../domain/nodes.ts';
import { credentialOf, looksLikeBiscuit, type CheckedNodeToken, type CustomerNodeTokenCheck } from '../secrets/customer-node-tokens.ts';
import type { NodeAccess, NodeTarget } from './node-access.ts';
import { isReadOnlyNodeRequest } from './route-scope.ts';

export type BearerCaller = AuthenticatedUser | NodeTokenCaller;

export class NodeTokenCaller {
  private checked?: CheckedNodeToken;

  private constructor(
    private readonly credential: string,
    private readonly checker: Pick<CustomerNodeTokenCheck, 'check'>,
  ) {}

  /** A caller for a Biscuit credential; undefined for anything else (an API token, nothing). */
  static of(authorization: string | undefined, checker: Pick<CustomerNodeTokenCheck, 'check'> | undefined): NodeTokenCaller | undefined {
    if (!checker) return undefined;
    const credential = credentialOf(authorization);
    return looksLikeBiscuit(credential) ? new NodeTokenCaller(credential, checker) : undefined;
  }

  /** Rate-limited per token: its signature (the last characters) tells tokens apart. */
  get limitKey(): string {
    return `node-token:${this.credential.slice(-64)}`;
  }

  get mintedBy(): string {
    return this.checked?.mintedBy ?? '';
  }

  /** Exactly `Bearer <token>`, the only form RLN accepts, whatever form the client sent. */
  get authorization(): string | undefined {
    return this.checked?.authorization;
  }

  async node(access: Pick<NodeAccess, 'accountNode'>, target: NodeTarget, fresh: boolean): Promise<Node> {
    this.checked = await this.checker.check(this.credential, target.nodeId);
    if (!allows(this.checked, target.method, target.route)) {
      throw forbiddenScope(`this node token (${this.checked.role}) may not call ${target.method} /${target.route.slice(0, 64)} (RLN's rules, docs/NODE-ACCESS.md)`);
    }
    return access.accountNode(target.userId, target.nodeId, fresh);
  }
}

/** RLN's rules (src/auth.rs) for a route as the gateway sees it ('' is the node's own status document, a read). */
function allows(token: CheckedNodeToken, method: string, route: string): boolean {
  if (token.role === 'admin') return true;
  if (token.role === 'read-only' || route === '') return isReadOnlyNodeRequest(method, route);
  return token.routes.includes(`/${route}`);
}
