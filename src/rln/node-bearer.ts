// What the service sends a node as `Authorization` (RLN's Biscuit authentication, issue #40): a
// Biscuit of the caller's role, minted with the node's root key. The RLN client and the gateways ask
// for it by node and role; secrets/node-biscuits.ts mints and caches them.

/** The roles the service itself mints for: its own calls and members are admin, viewers and read-only tokens read-only. */
export type NodeCallerRole = 'admin' | 'read-only';

export interface NodeBearers {
  /**
   * The whole header value (`Bearer <biscuit>`), at once when a fresh one is cached; undefined for
   * a node without a root key (one created before issue #40, which runs without authentication).
   */
  authorization(nodeId: string, role: NodeCallerRole): string | undefined | Promise<string | undefined>;
}
