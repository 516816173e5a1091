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
/** With its minter's role now in the account of its node (null: no member any more), the cap the gateway applies. */
export async function findNodeTokenByRevocationId(db: Queryable, revocationId: string): Promise<(NodeTokenRow & { minter_role: string | null }) | undefined> {
  const rows = await db.query<NodeTokenRow & { minter_role: string | null }>(
    `SELECT t.*, m.role AS minter_role FROM node_tokens t
       JOIN nodes n ON n.id = t.node_id
       LEFT JOIN account_members m ON m.account_id = n.user_id AND m.user_id = t.minted_by
     WHERE t.revocation_id = $1`,
    [revocationId],
  );
  return rows[0];
}

/** Marks a token revoked (the first time only); answers the row as it is now. */
export async function revokeNodeTokenRow(db: Queryable, nodeId: string, tokenId: string, reason: string): Promise<NodeTokenRow | undefined> {
  await db.query('UPDATE node_tokens SET revoked_at = now(), revoked_reason = $3 WHERE node_id = $1 AND id = $2 AND revoked_at IS NULL', [nodeId, tokenId, reason]);
  return findNodeToken(db, nodeId, tokenId);
}

/** Marks the given live tokens of a minter revoked because of the minter's role; answers those it marked. */
export async function revokeMinterTokens(db: Queryable, mintedBy: string, tokenIds: string[]): Promise<NodeTokenRow[]> {
  if (tokenIds.length === 0) return [];
  return db.query<NodeTokenRow>(
    `UPDATE node_tokens SET revoked_at = now(), revoked_reason = 'minter_role'
     WHERE minted_by = $1 AND revoked_at IS NULL AND id = ANY($2::text[]) RETURNING *`,
    [mintedBy, tokenIds],
  );
}

/** A minter's live tokens, each with the minter's role now in the account of its node (null: no member any more). */
export async function liveMinterTokens(db: Queryable, mintedBy: string): Promise<Array<NodeTokenRow & { minter_role: string | null }>> {
  return db.query(
    `SELECT t.*, m.role AS minter_role FROM node_tokens t
       JOIN nodes n ON n.id = t.node_id
       LEFT JOIN account_members m ON m.account_id = n.user_id AND m.user_id = t.minted_by
     WHERE t.minted_by = $1 AND t.revoked_at IS NULL AND t.expires_at > now()`,
    [mintedBy],
  );
}

/** Revoked tokens of a node that have not expired: what the node's revoked list must hold. */
export async function revokedLiveNodeTokens(db: Queryable, nodeId: string): Promise<NodeTokenRow[]> {
  return db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 AND revoked_at IS NOT NULL AND expires_at > now() ORDER BY revoked_at', [nodeId]);
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
