// Client certificate records: issued, listed, revoked, and looked up by the mutual-TLS gateway.
import type { Queryable } from './database.ts';
import { nodeFromRow, type NodeRow } from './nodes.ts';
import type { Node } from '../domain/nodes.ts';

export interface CertificateRow {
  serial: string;
  user_id: string;
  node_id: string;
  fingerprint: string;
  not_before: Date;
  not_after: Date;
  created_at: Date;
  revoked_at: Date | null;
}

export async function insertCertificate(
  db: Queryable,
  c: Pick<CertificateRow, 'serial' | 'user_id' | 'node_id' | 'fingerprint' | 'not_before' | 'not_after'>,
) {
  return (
    await db.query<CertificateRow>(
      `INSERT INTO client_certificates (serial, user_id, node_id, fingerprint, not_before, not_after)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [c.serial, c.user_id, c.node_id, c.fingerprint, c.not_before, c.not_after],
    )
  )[0]!;
}

/** A node's certificates, oldest first; with `page`, at most `limit` of them after the one `afterSerial`. */
export async function listNodeCertificates(db: Queryable, nodeId: string, page?: { limit: number; afterSerial?: string }) {
  if (!page) return db.query<CertificateRow>('SELECT * FROM client_certificates WHERE node_id = $1 ORDER BY created_at, serial', [nodeId]);
  return db.query<CertificateRow>(
    `SELECT * FROM client_certificates
     WHERE node_id = $1 AND ($2::text IS NULL OR (created_at, serial) > (SELECT created_at, serial FROM client_certificates WHERE serial = $2))
     ORDER BY created_at, serial LIMIT $3`,
    [nodeId, page.afterSerial ?? null, page.limit],
  );
}

export async function findCertificate(db: Queryable, serial: string) {
  return (await db.query<CertificateRow>('SELECT * FROM client_certificates WHERE serial = $1', [serial]))[0];
}

/** Revokes once: a second revocation keeps the first time. Returns undefined for an unknown serial. */
export async function revokeCertificate(db: Queryable, serial: string, nodeId?: string) {
  return (
    await db.query<CertificateRow>(
      `UPDATE client_certificates SET revoked_at = coalesce(revoked_at, now())
       WHERE serial = $1 AND ($2::text IS NULL OR node_id = $2) RETURNING *`,
      [serial, nodeId ?? null],
    )
  )[0];
}

export interface PresentedCertificate {
  cert: Pick<CertificateRow, 'serial' | 'user_id' | 'node_id' | 'fingerprint' | 'not_after' | 'revoked_at'>;
  node: Node;
}

/** The certificate a TLS client presented, with the node it is bound to, in one round trip. */
export async function findCertificateWithNode(db: Queryable, serial: string): Promise<PresentedCertificate | undefined> {
  const rows = await db.query<NodeRow & { c_serial: string; c_user_id: string; c_fingerprint: string; c_not_after: Date; c_revoked_at: Date | null }>(
    `SELECT n.*, c.serial AS c_serial, c.user_id AS c_user_id, c.fingerprint AS c_fingerprint,
            c.not_after AS c_not_after, c.revoked_at AS c_revoked_at
     FROM client_certificates c JOIN nodes n ON n.id = c.node_id WHERE c.serial = $1`,
    [serial],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { c_serial, c_user_id, c_fingerprint, c_not_after, c_revoked_at, ...node } = row;
  return {
    cert: { serial: c_serial, user_id: c_user_id, node_id: node.id, fingerprint: c_fingerprint, not_after: c_not_after, revoked_at: c_revoked_at },
    node: nodeFromRow(node),
  };
}
