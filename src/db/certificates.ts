// Client certificate records: issued, listed, revoked, and looked up by the mutual-TLS gateway.
import type { Queryable } from './database.ts';
import { nodeFromRow, type NodeRow } from './nodes.ts';
import type { Node } from '../domain/nodes.ts';
import type { Role } from '../domain/roles.ts';

export interface CertificateRow {
  serial: string;
  user_id: string;
  node_id: string;
  fingerprint: string;
  not_before: Date;
  not_after: Date;
  created_at: Date;
  revoked_at: Date | null;
  /** The member who issued it (migration 0020); NULL: the account's owner (issued before accounts, or by the operator). */
  issued_by: string | null;
}

export async function insertCertificate(
  db: Queryable,
  c: Pick<CertificateRow, 'serial' | 'user_id' | 'node_id' | 'fingerprint' | 'not_before' | 'not_after' | 'issued_by'>,
) {
  return (
    await db.query<CertificateRow>(
      `INSERT INTO client_certificates (serial, user_id, node_id, fingerprint, not_before, not_after, issued_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [c.serial, c.user_id, c.node_id, c.fingerprint, c.not_before, c.not_after, c.issued_by],
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
  cert: Pick<CertificateRow, 'serial' | 'user_id' | 'node_id' | 'fingerprint' | 'not_after' | 'revoked_at' | 'issued_by'>;
  node: Node;
  /** The issuer's role in the account now (the owner's for a certificate without an issuer): what the certificate may do. */
  issuerRole: Role;
}

/**
 * The certificate a TLS client presented, with the node it is bound to and its issuer's current
 * role, in one round trip; none when its issuer is no longer a member of the certificate's account
 * (removing a member deletes their certificates too, but a certificate must never outlive its
 * issuer's membership).
 */
export async function findCertificateWithNode(db: Queryable, serial: string): Promise<PresentedCertificate | undefined> {
  const rows = await db.query<
    NodeRow & { c_serial: string; c_user_id: string; c_fingerprint: string; c_not_after: Date; c_revoked_at: Date | null; c_issued_by: string | null; c_issuer_role: Role }
  >(
    `SELECT n.*, c.serial AS c_serial, c.user_id AS c_user_id, c.fingerprint AS c_fingerprint,
            c.not_after AS c_not_after, c.revoked_at AS c_revoked_at, c.issued_by AS c_issued_by,
            coalesce(m.role, 'owner') AS c_issuer_role
     FROM client_certificates c JOIN nodes n ON n.id = c.node_id
       LEFT JOIN account_members m ON m.account_id = c.user_id AND m.user_id = c.issued_by
     WHERE c.serial = $1 AND (c.issued_by IS NULL OR m.user_id IS NOT NULL)`,
    [serial],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { c_serial, c_user_id, c_fingerprint, c_not_after, c_revoked_at, c_issued_by, c_issuer_role, ...node } = row;
  return {
    cert: {
      serial: c_serial,
      user_id: c_user_id,
      node_id: node.id,
      fingerprint: c_fingerprint,
      not_after: c_not_after,
      revoked_at: c_revoked_at,
      issued_by: c_issued_by,
    },
    node: nodeFromRow(node),
    issuerRole: c_issuer_role,
  };
}
