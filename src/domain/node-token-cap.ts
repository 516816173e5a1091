// Whether a member may still hold a node token they minted (issue #40: a token is capped by its
// minter's current role). Developers and above may change nodes, so they hold any token; a viewer
// only reads, so keeps a read-only token and a custom one whose routes are all RLN's read-only ones;
// someone who is no member any more holds none. The gateway applies this on every request and a
// role change or removal revokes what falls outside it (nodes/tokens/node-tokens.ts).
export function minterRoleCovers(minterRole: string | null | undefined, token: { role: string; routes: readonly string[] }, readOnlyRoutes: { has(route: string): boolean }): boolean {
  if (!minterRole) return false;
  if (minterRole !== 'viewer') return true;
  if (token.role === 'read-only') return true;
  if (token.role === 'custom') return token.routes.every((r) => readOnlyRoutes.has(r));
  return false;
}
