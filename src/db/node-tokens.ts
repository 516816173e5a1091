// node_tokens (migration 0045): customers' Biscuits for a node, never in clear (the token is sealed,
// only to be sent again to the node with a revocation).
import type { Queryable } from './database.ts';

export interface NodeTokenRow {
  id: string;
  node_id: string;
  role: 'admin' | 'read-only' | 'custom';
  /** JSON array text. */
  routes: string;
  expires_at: Date;
  minted_by: string;
  revocation_id: string;
  revocation_ids: string;
  sealed_token: string;
  created_at: Date;
  revoked_at: Date | null;
  revoked_reason: string | null;
  node_told_at: Date | null;
}

export type NewNodeToken = Pick<NodeTokenRow, 'id' | 'node_id' | 'role' | 'routes' | 'expires_at' | 'minted_by' | 'revocation_id' | 'revocation_ids' | 'sealed_token'>;

export async function insertNodeToken(db: Queryable, t: NewNodeToken): Promise<NodeTokenRow> {
  const rows = await db.query<NodeTokenRow>(
    `INSERT INTO node_tokens (id, node_id, role, routes, expires_at, minted_by, revocation_id, revocation_ids, sealed_token)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [t.id, t.node_id, t.role, t.routes, t.expires_at, t.minted_by, t.revocation_id, t.revocation_ids, t.sealed_token],
  );
  return rows[0]!;
}

/** A node's tokens, newest first (at most 500: a list for people, not a ledger). */
export async function listNodeTokens(db: Queryable, nodeId: string): Promise<NodeTokenRow[]> {
  return db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 ORDER BY created_at DESC, id LIMIT 500', [nodeId]);
}

export async function findNodeToken(db: Queryable, nodeId: string, tokenId: string): Promise<NodeTokenRow | undefined> {
  return (await db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 AND id = $2', [nodeId, tokenId]))[0];
}

/** What the bearer gateway looks a presented token up by: its authority block's revocation identifier. */
export async function findNodeTokenByRevocationId(db: Queryable, revocationId: string): Promise<NodeTokenRow | undefined> {
  return (await db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE revocation_id = $1', [revocationId]))[0];
}

/** Marks a token revoked (the first time only); answers the row as it is now. */
export async function revokeNodeTokenRow(db: Queryable, nodeId: string, tokenId: string, reason: string): Promise<NodeTokenRow | undefined> {
  await db.query('UPDATE node_tokens SET revoked_at = now(), revoked_reason = $3 WHERE node_id = $1 AND id = $2 AND revoked_at IS NULL', [nodeId, tokenId, reason]);
  return findNodeToken(db, nodeId, tokenId);
}

/**
 * Revokes a minter's live tokens on the nodes of `accountId` that their role now does not cover:
 * `keep` names the roles still allowed ('admin' and 'custom' go for a viewer, everything for a removed member).
 * A custom token whose routes are all read-only is kept by a viewer: `keepCustomIds`.
 */
export async function revokeMinterTokens(db: Queryable, accountId: string, mintedBy: string, revokeIds: string[]): Promise<NodeTokenRow[]> {
  if (revokeIds.length === 0) return [];
  return db.query<NodeTokenRow>(
    `UPDATE node_tokens SET revoked_at = now(), revoked_reason = 'minter_role'
     WHERE minted_by = $2 AND revoked_at IS NULL AND id = ANY($3::text[])
       AND node_id IN (SELECT id FROM nodes WHERE user_id = $1)
     RETURNING *`,
    [accountId, mintedBy, revokeIds],
  );
}

/** A minter's live tokens on the nodes of one account. */
export async function liveMinterTokens(db: Queryable, accountId: string, mintedBy: string): Promise<NodeTokenRow[]> {
  return db.query<NodeTokenRow>(
    `SELECT * FROM node_tokens WHERE minted_by = $2 AND revoked_at IS NULL AND expires_at > now()
       AND node_id IN (SELECT id FROM nodes WHERE user_id = $1)`,
    [accountId, mintedBy],
  );
}

/** Revoked tokens of a node that have not expired: what the node's revoked list must hold. */
export async function revokedLiveNodeTokens(db: Queryable, nodeId: string): Promise<NodeTokenRow[]> {
  return db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 AND revoked_at IS NOT NULL AND expires_at > now() ORDER BY revoked_at', [nodeId]);
}

/** Nodes with revocations the node has not taken yet. */
export async function nodesWithUntoldRevocations(db: Queryable, mintedBy: string): Promise<string[]> {
  const rows = await db.query<{ node_id: string }>(
    'SELECT DISTINCT node_id FROM node_tokens WHERE minted_by = $1 AND revoked_at IS NOT NULL AND node_told_at IS NULL AND expires_at > now()',
    [mintedBy],
  );
  return rows.map((r) => r.node_id);
}

export async function markNodeTold(db: Queryable, tokenIds: string[]): Promise<void> {
  if (tokenIds.length > 0) await db.query('UPDATE node_tokens SET node_told_at = now() WHERE id = ANY($1::text[])', [tokenIds]);
}

export async function listSealedNodeTokens(db: Queryable): Promise<Array<{ id: string; sealed_token: string }>> {
  return db.query('SELECT id, sealed_token FROM node_tokens');
}

export async function replaceSealedNodeToken(db: Queryable, id: string, from: string, to: string): Promise<void> {
  await db.query('UPDATE node_tokens SET sealed_token = $3 WHERE id = $1 AND sealed_token = $2', [id, from, to]);
}
