// Customers' own node tokens (issue #40, point 4): Biscuits minted with a node's root key following
// RLN's rules (rln/biscuit-mint.ts), answered once. The service keeps their id, role, routes, expiry,
// minter and revocation identifiers, and the token itself only sealed with the unlock seal: RLN's
// POST /revoketoken takes the whole token, and a node's own revoked list goes with its volume (a
// recovery onto a fresh one) or is missed while it is stopped, so every revocation is sent again
// after each successful unlock (revocations.ts).
//
// A token is capped by its minter's current role: a member who may change nodes (developer and
// above) may mint any role; a viewer and a read-only API token may mint none (the management API's
// role and scope rules refuse them first); a demoted minter's tokens above their new role and a
// removed minter's tokens are revoked (capToMinterRole).
import { randomUUID } from 'node:crypto';
import type { AccountService, AuthenticatedUser } from '../../accounts/service.ts';
import type { Logger } from '../../logger.ts';
import type { Database } from '../../db/database.ts';
import { findUserNode } from '../../db/nodes.ts';
import { findNodeToken, insertNodeToken, listNodeTokens, liveMinterTokens, revokeMinterTokens, revokeNodeTokenRow } from '../../db/node-tokens.ts';
import type { StoredNodeToken } from '../../domain/node-tokens.ts';
import { listSealedNodeTokens, replaceSealedNodeToken } from '../../db/node-tokens.ts';
import { minterRoleCovers } from '../../domain/node-token-cap.ts';
import { AppError, nodeNotFound } from '../../errors.ts';
import { mintNodeToken, type NodeTokenRole } from '../../rln/biscuit-mint.ts';
import type { NodeRootKeyStore } from '../../secrets/node-root-keys.ts';
import type { SealedValueStore } from '../../secrets/unlock-seal-keys.ts';
import type { UnlockSeal } from '../../secrets/unlock-seal.ts';
import type { NodeTokenRevocations } from './revocations.ts';
import { nodeTokenSealContext } from './seal-context.ts';


/** Sealed node tokens, re-sealed by a rotation of the unlock seal's key (composition/unlock-seal.ts). */
export const NODE_TOKENS: SealedValueStore = {
  what: 'node tokens',
  async list(db) {
    return (await listSealedNodeTokens(db)).map((r) => ({ id: r.id, sealed: r.sealed_token, associatedData: nodeTokenSealContext(r.id) }));
  },
  replace: replaceSealedNodeToken,
};

/** Without an expiry a token lasts this long; never longer than MAX_LIFETIME_MS. */
export const DEFAULT_LIFETIME_MS = 30 * 24 * 3600_000;
export const MAX_LIFETIME_MS = 366 * 24 * 3600_000;
/** RLN's route names: a slash and lowercase letters (`/nodeinfo`). */
const ROUTE_NAME = /^\/[a-z]{1,64}$/;
const MAX_ROUTES = 100;

/** RLN's read-only routes (its READ_ONLY_OPS), as route names: what a viewer's custom token may keep. */
export interface ReadOnlyRoutes {
  has(route: string): boolean;
}

export interface NodeTokenView {
  id: string;
  nodeId: string;
  role: NodeTokenRole;
  routes: string[];
  expiresAt: string;
  createdAt: string;
  mintedBy: string;
  revocationIds: string[];
  status: 'valid' | 'expired' | 'revoked';
  revokedAt: string | null;
  revokedReason: string | null;
}

export interface MintInput {
  role: string;
  routes?: string[];
  expiresAt?: string;
}

export interface NodeTokenServiceDeps {
  db: Database;
  seal: Pick<UnlockSeal, 'seal'>;
  keys: Pick<NodeRootKeyStore, 'privateKeyOf'>;
  revocations: Pick<NodeTokenRevocations, 'sendPending'>;
  readOnlyRoutes: ReadOnlyRoutes;
  /** NODE_API_URL: the bearer gateway, for the node's URL in a mint's answer. */
  nodeApiUrl: string;
  /** Told of every member's role change or removal in this process: their tokens are capped then. */
  accounts?: Pick<AccountService, 'onMemberChanged'>;
  log?: Logger;
  now?: () => number;
}

export class NodeTokenService {
  constructor(private readonly deps: NodeTokenServiceDeps) {
    deps.accounts?.onMemberChanged((userId) => {
      this.capToMinterRole(userId).catch((err: unknown) => deps.log?.error({ err, userId }, "could not revoke a member's node tokens above their new role"));
    });
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  async mint(user: AuthenticatedUser, nodeId: string, input: MintInput): Promise<NodeTokenView & { token: string; nodeUrl: string }> {
    const claims = this.validate(input);
    // Defence in depth: the route's least role (developer) and a read-only token's scope refuse these first.
    if (user.scope.readOnly || user.role === 'viewer') {
      throw new AppError('forbidden_role', 'a viewer or a read-only API token cannot mint node tokens', { role: user.role });
    }
    const node = await findUserNode(this.deps.db, user.accountId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    if (node.status === 'DESTROYED') throw new AppError('node_destroyed', `node ${nodeId} is destroyed`);
    const privateKey = await this.deps.keys.privateKeyOf(nodeId);
    if (!privateKey) {
      throw new AppError('node_state_conflict', `node ${nodeId} has no Biscuit root key yet: it gets one at its next start (docs/NODE-ACCESS.md)`);
    }
    let minted;
    try {
      minted = mintNodeToken(privateKey, claims);
    } finally {
      privateKey.fill(0);
    }
    const id = randomUUID();
    const row = await insertNodeToken(this.deps.db, {
      id,
      nodeId,
      role: claims.role,
      routes: claims.routes,
      expiresAt: claims.expiresAt,
      mintedBy: user.id,
      revocationIds: minted.revocationIds,
      sealedToken: this.deps.seal.seal(minted.token, nodeTokenSealContext(id)),
    });
    return { ...this.present(row), token: minted.token, nodeUrl: `${this.deps.nodeApiUrl}/${user.accountId}/${nodeId}/` };
  }

  async list(accountId: string, nodeId: string): Promise<NodeTokenView[]> {
    if (!(await findUserNode(this.deps.db, accountId, nodeId))) throw nodeNotFound(nodeId);
    return (await listNodeTokens(this.deps.db, nodeId)).map((r) => this.present(r));
  }

  /** Revokes a token (again: keeps the first time) and tells the node; a node that cannot be told now is told after its next unlock. */
  async revoke(accountId: string, nodeId: string, tokenId: string): Promise<NodeTokenView> {
    if (!(await findUserNode(this.deps.db, accountId, nodeId))) throw nodeNotFound(nodeId);
    if (!(await findNodeToken(this.deps.db, nodeId, tokenId))) throw new AppError('not_found', `node token ${tokenId} was not found on node ${nodeId}`);
    const row = (await revokeNodeTokenRow(this.deps.db, nodeId, tokenId, 'revoked'))!;
    await this.deps.revocations.sendPending(nodeId);
    return this.present(row);
  }

  /**
   * After a member's role changed or they were removed: revokes what they minted above their role
   * now in the account of each token's node (everything when they are no member any more), and
   * tells the nodes. The gateway applies the same cap on every request, so a token stops working
   * at the change even if this does not run (a crash between the two).
   */
  async capToMinterRole(userId: string): Promise<StoredNodeToken[]> {
    const live = await liveMinterTokens(this.deps.db, userId);
    const above = live.filter((t) => !minterRoleCovers(t.minterRole, t, this.deps.readOnlyRoutes));
    const revoked = await revokeMinterTokens(this.deps.db, userId, above.map((t) => t.id));
    for (const nodeId of new Set(revoked.map((t) => t.nodeId))) await this.deps.revocations.sendPending(nodeId);
    return revoked;
  }

  private validate(input: MintInput): { role: NodeTokenRole; routes: string[]; expiresAt: Date } {
    const role = input.role as NodeTokenRole;
    if (!['admin', 'read-only', 'custom'].includes(role)) throw invalid('role', 'role must be admin, read-only or custom');
    if (role !== 'custom' && input.routes !== undefined) throw invalid('routes', 'routes are for a custom token only');
    const routes = role === 'custom' ? (input.routes ?? []) : [];
    if (role === 'custom' && routes.length === 0) throw invalid('routes', 'a custom token needs at least one route (e.g. "/nodeinfo")');
    if (routes.length > MAX_ROUTES) throw invalid('routes', `at most ${MAX_ROUTES} routes`);
    const bad = routes.find((r) => !ROUTE_NAME.test(r));
    if (bad !== undefined) throw invalid('routes', `"${bad.slice(0, 80)}" is not an RLN route name (a slash and lowercase letters, e.g. "/nodeinfo")`);
    const now = this.now();
    let expiresAt = new Date(now + DEFAULT_LIFETIME_MS);
    if (input.expiresAt !== undefined) {
      expiresAt = new Date(input.expiresAt);
      if (Number.isNaN(expiresAt.getTime())) throw invalid('expiresAt', 'expiresAt must be an ISO 8601 time');
      if (expiresAt.getTime() <= now) throw invalid('expiresAt', 'expiresAt must be in the future');
      if (expiresAt.getTime() > now + MAX_LIFETIME_MS) throw invalid('expiresAt', 'expiresAt must be within 366 days');
    }
    return { role, routes: [...new Set(routes)], expiresAt };
  }

  private present(t: StoredNodeToken): NodeTokenView {
    const status = t.revokedAt ? 'revoked' : t.expiresAt.getTime() <= this.now() ? 'expired' : 'valid';
    return {
      id: t.id,
      nodeId: t.nodeId,
      role: t.role,
      routes: t.routes,
      expiresAt: t.expiresAt.toISOString(),
      createdAt: t.createdAt.toISOString(),
      mintedBy: t.mintedBy,
      revocationIds: t.revocationIds,
      status,
      revokedAt: t.revokedAt?.toISOString() ?? null,
      revokedReason: t.revokedReason,
    };
  }
}

const invalid = (field: string, message: string) => new AppError('invalid_request', message, { field });
