// Customers' node tokens (issue #40, point 4) as the bearer gateway checks them before a request
// reaches the node: a Biscuit signed by the root key of the node the path names (so a token of
// another node fails its signature), recorded by the service (found by its first revocation
// identifier: a Biscuit the service mints for itself is never accepted from a client), not revoked
// and not expired. Then the gateway applies RLN's role rules to the route itself, because some of a
// node's paths the service answers with its own admin Biscuit (unlock, init, the status document).
import type { Biscuit } from '@biscuit-auth/biscuit-wasm';
import type { Database } from '../db/database.ts';
import { findNodeRootKey } from '../db/node-root-keys.ts';
import { findNodeTokenByRevocationId } from '../db/node-tokens.ts';
import type { StoredNodeToken } from '../domain/node-tokens.ts';
import { biscuits } from '../platform/biscuit-wasm.ts';
import type { NodeTokenRole } from '../rln/biscuit-mint.ts';
import { AppError } from '../errors.ts';
import { looksLikeToken } from '../auth/tokens.ts';
import { minterRoleCovers } from '../domain/node-token-cap.ts';


/** The credential of an Authorization header without its scheme: `Bearer x`, `bearer x` or a bare `x`. */
export function credentialOf(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const trimmed = authorization.trim();
  const match = /^bearer\s+(.+)$/i.exec(trimmed);
  return (match ? match[1]! : trimmed).trim() || undefined;
}

/** Whether a credential is worth checking as a Biscuit: not an API token, and base64url-looking. */
export function looksLikeBiscuit(credential: string | undefined): credential is string {
  // An API token (auth/tokens.ts: `rlnc_` and 43 characters) never is one; a Biscuit is far longer.
  return credential !== undefined && !looksLikeToken(credential) && credential.length > 64 && /^[A-Za-z0-9_-]+={0,2}$/.test(credential);
}

export interface CheckedNodeToken {
  id: string;
  nodeId: string;
  role: NodeTokenRole;
  /** RLN route names (`/nodeinfo`) of a custom token. */
  routes: string[];
  /** The member who minted it: its calls are metered as theirs. */
  mintedBy: string;
  /** The whole header to send the node: exactly `Bearer <token>`, whatever form the client used. */
  authorization: string;
}

const refused = () => new AppError('unauthorized', 'the node token is invalid, expired, revoked or not for this node');

export class CustomerNodeTokenCheck {
  private readonly publicKeys = new Map<string, { key: string; until: number }>();

  constructor(private readonly deps: { db: Database; readOnlyRoutes: { has(route: string): boolean }; now?: () => number }) {}

  /** The token as recorded, once its signature (with `nodeId`'s root key), record, expiry and revocation pass; else 401. */
  async check(credential: string, nodeId: string): Promise<CheckedNodeToken> {
    const publicKey = await this.publicKeyOf(nodeId);
    if (!publicKey) throw refused();
    const lib = biscuits();
    let token: Biscuit;
    try {
      token = lib.Biscuit.fromBase64(credential, lib.PublicKey.fromBytes(Buffer.from(publicKey, 'hex'), lib.SignatureAlgorithm.Ed25519));
    } catch {
      throw refused(); // not a Biscuit, or not signed by this node's root key (another node's, a forgery)
    }
    let ids: string[];
    try {
      ids = token.getRevocationIdentifiers().map(String);
    } finally {
      token.free();
    }
    const row = ids[0] === undefined ? undefined : await findNodeTokenByRevocationId(this.deps.db, ids[0]);
    if (!row || row.nodeId !== nodeId || !usable(row, this.deps.now?.() ?? Date.now())) throw refused();
    // Capped by its minter's role now: a demoted or removed minter's token stops at once, also
    // before (or without) the revocation their change triggers.
    if (!minterRoleCovers(row.minterRole, row, this.deps.readOnlyRoutes)) throw refused();
    return {
      id: row.id,
      nodeId,
      role: row.role,
      routes: row.routes,
      mintedBy: row.mintedBy,
      authorization: `Bearer ${credential}`,
    };
  }

  private async publicKeyOf(nodeId: string): Promise<string | undefined> {
    const now = this.deps.now?.() ?? Date.now();
    const known = this.publicKeys.get(nodeId);
    if (known && known.until > now) return known.key;
    const found = await findNodeRootKey(this.deps.db, nodeId);
    // A root key changes only when an operator replaces a lost one (docs/NODE-ACCESS.md): a minute is
    // soon enough; a missing one is read again next time.
    if (found) {
      if (this.publicKeys.size > 10_000) this.publicKeys.clear();
      this.publicKeys.set(nodeId, { key: found.public_key, until: now + 60_000 });
    }
    return found?.public_key;
  }
}

function usable(row: StoredNodeToken, now: number): boolean {
  return row.revokedAt === null && row.expiresAt.getTime() > now;
}
