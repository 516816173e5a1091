// A customer's node token as the service keeps it (issue #40, point 4): never the token in clear,
// only sealed (what a revocation must send the node again). Mapped from its row by db/node-tokens.ts.

export type NodeTokenRole = 'admin' | 'read-only' | 'custom';

export interface StoredNodeToken {
  id: string;
  nodeId: string;
  role: NodeTokenRole;
  /** RLN route names (`/nodeinfo`) of a custom token; empty for the others. */
  routes: string[];
  expiresAt: Date;
  /** The member who minted it. */
  mintedBy: string;
  /** Every revocation identifier (hex) of the token as minted; the first is what it is found by. */
  revocationIds: string[];
  sealedToken: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** 'revoked' by a member, 'minter_role' when the minter was demoted or removed. */
  revokedReason: string | null;
  /** When the node last took its revocation; null: still to be sent. */
  nodeToldAt: Date | null;
  /** The minter's role now in the account of the token's node (null: no member); only where asked for. */
  minterRole?: string | null;
}
