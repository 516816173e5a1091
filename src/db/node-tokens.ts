// node_tokens (migration 0043): customers' Biscuits for a node, never in clear (the token is sealed,
// only to be sent again to the node with a revocation).
import type { Queryable } from './database.ts';
import type { NodeTokenRole, StoredNodeToken } from '../domain/node-tokens.ts';
import { jsonParam } from './storable-text.ts';

interface NodeTokenRow {
  id: string;
  node_id: string;
  role: NodeTokenRole;
  minter_role?: string | null;
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

export type NewNodeToken = Pick<StoredNodeToken, 'id' | 'nodeId' | 'role' | 'routes' | 'expiresAt' | 'mintedBy' | 'revocationIds' | 'sealedToken'>;

function nodeTokenFromRow(r: NodeTokenRow): StoredNodeToken {
  return {
    id: r.id,
    nodeId: r.node_id,
    role: r.role,
    routes: JSON.parse(r.routes) as string[],
    expiresAt: r.expires_at,
    mintedBy: r.minted_by,
    revocationIds: JSON.parse(r.revocation_ids) as string[],
    sealedToken: r.sealed_token,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    revokedReason: r.revoked_reason,
    nodeToldAt: r.node_told_at,
    ...(r.minter_role === undefined ? {} : { minterRole: r.minter_role }),
  };
}

export async function insertNodeToken(db: Queryable, t: NewNodeToken): Promise<StoredNodeToken> {
  const rows = await db.query<NodeTokenRow>(
    `INSERT INTO node_tokens (id, node_id, role, routes, expires_at, minted_by, revocation_id, revocation_ids, sealed_token)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [t.id, t.nodeId, t.role, jsonParam(t.routes), t.expiresAt, t.mintedBy, t.revocationIds[0], jsonParam(t.revocationIds), t.sealedToken],
  );
  return nodeTokenFromRow(rows[0]!);
}

/** A node's tokens, newest first (at most 500: a list for people, not a ledger). */
export async function listNodeTokens(db: Queryable, nodeId: string): Promise<StoredNodeToken[]> {
  return (await db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 ORDER BY created_at DESC, id LIMIT 500', [nodeId])).map(nodeTokenFromRow);
}

export async function findNodeToken(db: Queryable, nodeId: string, tokenId: string): Promise<StoredNodeToken | undefined> {
  return (await db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 AND id = $2', [nodeId, tokenId])).map(nodeTokenFromRow)[0];
}

/** What the bearer gateway looks a presented token up by: its authority block's revocation identifier. */
/** With its minter's role now in the account of its node (null: no member any more), the cap the gateway applies. */
export async function findNodeTokenByRevocationId(db: Queryable, revocationId: string): Promise<StoredNodeToken | undefined> {
  const rows = await db.query<NodeTokenRow>(
    `SELECT t.*, m.role AS minter_role FROM node_tokens t
       JOIN nodes n ON n.id = t.node_id
       LEFT JOIN account_members m ON m.account_id = n.user_id AND m.user_id = t.minted_by
     WHERE t.revocation_id = $1`,
    [revocationId],
  );
  return rows.map(nodeTokenFromRow)[0];
}

/** Marks a token revoked (the first time only); answers the row as it is now. */
export async function revokeNodeTokenRow(db: Queryable, nodeId: string, tokenId: string, reason: string): Promise<StoredNodeToken | undefined> {
  await db.query('UPDATE node_tokens SET revoked_at = now(), revoked_reason = $3 WHERE node_id = $1 AND id = $2 AND revoked_at IS NULL', [nodeId, tokenId, reason]);
  return findNodeToken(db, nodeId, tokenId);
}

/** Marks the given live tokens of a minter revoked because of the minter's role; answers those it marked. */
export async function revokeMinterTokens(db: Queryable, mintedBy: string, tokenIds: string[]): Promise<StoredNodeToken[]> {
  if (tokenIds.length === 0) return [];
  const rows = await db.query<NodeTokenRow>(
    `UPDATE node_tokens SET revoked_at = now(), revoked_reason = 'minter_role'
     WHERE minted_by = $1 AND revoked_at IS NULL AND id = ANY($2::text[]) RETURNING *`,
    [mintedBy, tokenIds],
  );
  return rows.map(nodeTokenFromRow);
}

/** A minter's live tokens, each with the minter's role now in the account of its node (null: no member any more). */
export async function liveMinterTokens(db: Queryable, mintedBy: string): Promise<StoredNodeToken[]> {
  const rows = await db.query<NodeTokenRow>(
    `SELECT t.*, m.role AS minter_role FROM node_tokens t
       JOIN nodes n ON n.id = t.node_id
       LEFT JOIN account_members m ON m.account_id = n.user_id AND m.user_id = t.minted_by
     WHERE t.minted_by = $1 AND t.revoked_at IS NULL AND t.expires_at > now()`,
    [mintedBy],
  );
  return rows.map(nodeTokenFromRow);
}

/** Revoked tokens of a node that have not expired: what the node's revoked list must hold. */
export async function revokedLiveNodeTokens(db: Queryable, nodeId: string): Promise<StoredNodeToken[]> {
  const rows = await db.query<NodeTokenRow>('SELECT * FROM node_tokens WHERE node_id = $1 AND revoked_at IS NOT NULL AND expires_at > now() ORDER BY revoked_at', [nodeId]);
  return rows.map(nodeTokenFromRow);
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
