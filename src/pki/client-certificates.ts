// Client certificates for the mutual-TLS gateway: issued to a node's owner (the private key is
// returned once and never stored), listed, and revoked by the owner or the operator. The record
// by serial is what the gateway trusts; revocation takes effect on the next request.
import type { Database } from '../db/database.ts';
import {
  findCertificate,
  insertCertificate,
  listNodeCertificates,
  revokeCertificate,
  type CertificateRow,
} from '../db/certificates.ts';
import { findNode, findUserNode } from '../db/nodes.ts';
import { decodeCursor, encodeCursor, pageOf, staleCursor } from '../domain/paging.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { isId } from '../auth/tokens.ts';
import type { CertificateAuthority } from './certificate-authority.ts';
import type { Node } from '../domain/nodes.ts';

export interface IssuedClientCertificate {
  certificate: string;
  /** The chain above the certificate: the service's CA, also what clients verify the gateway with. */
  certificateChain: string;
  privateKey: string;
  publicKey: string;
  /** The node through the mutual-TLS gateway: where these credentials open it (user id included). */
  nodeUrl: string;
  serial: string;
  expiresAt: string;
}

export type CertificateStatus = 'valid' | 'expired' | 'revoked';

export interface CertificateView {
  serial: string;
  nodeId: string;
  fingerprint: string;
  status: CertificateStatus;
  createdAt: string;
  notBefore: string;
  expiresAt: string;
  revokedAt: string | null;
}

export function presentCertificate(row: CertificateRow, now = Date.now()): CertificateView {
  return {
    serial: row.serial,
    nodeId: row.node_id,
    fingerprint: row.fingerprint,
    status: row.revoked_at ? 'revoked' : row.not_after.getTime() <= now ? 'expired' : 'valid',
    createdAt: row.created_at.toISOString(),
    notBefore: row.not_before.toISOString(),
    expiresAt: row.not_after.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

/** Serials are accepted as printed by openssl or node (upper case, colons) and stored lower case. */
export function normalizeSerial(raw: string): string {
  const serial = raw.replaceAll(':', '').toLowerCase();
  if (!/^[0-9a-f]{2,64}$/.test(serial)) throw new AppError('invalid_request', 'serial must be the hexadecimal serial number of a certificate');
  return serial;
}

export interface CertificateServiceDeps {
  db: Database;
  /** Default and longest validity of a client certificate. */
  maxValidityDays: number;
  /** USER_NODE_URL: the mutual-TLS gateway's public base, for the node URL handed out with a certificate. */
  userNodeUrl: string;
  /** Only the serving process loads the CA; the operator CLI lists and revokes without it. */
  ca?: CertificateAuthority;
}

export class CertificateService {
  private readonly revokedListeners: Array<(serial: string) => void> = [];

  constructor(private readonly deps: CertificateServiceDeps) {}

  /** Lets the gateway drop what it remembers about a certificate the moment it is revoked here. */
  onRevoked(listener: (serial: string) => void) {
    this.revokedListeners.push(listener);
  }

  /**
   * `userId` is the account's (the `<user_id>` of its node URLs); `issuedBy` the member who asks,
   * whose removal ends the certificate (null: the owner, or the operator on the owner's behalf).
   */
  async issue(userId: string, nodeId: string, validitySeconds?: number, issuedBy: string | null = null): Promise<IssuedClientCertificate> {
    const ca = this.deps.ca;
    if (!ca) throw new AppError('service_unavailable', 'this process has no certificate authority loaded');
    const maxSeconds = this.deps.maxValidityDays * 86_400;
    if (validitySeconds !== undefined && (validitySeconds < 1 || validitySeconds > maxSeconds)) {
      throw new AppError('invalid_request', `validitySeconds must be between 1 and ${maxSeconds} (CLIENT_CERT_DAYS)`);
    }
    const node = await this.ownedLiveNode(userId, nodeId);
    const issued = await ca.issueClientCertificate({ userId, nodeId: node.id, validitySeconds: validitySeconds ?? maxSeconds });
    await insertCertificate(this.deps.db, {
      serial: issued.serial,
      user_id: userId,
      node_id: node.id,
      fingerprint: issued.fingerprint,
      not_before: issued.notBefore,
      not_after: issued.notAfter,
      issued_by: issuedBy,
    });
    return {
      certificate: issued.certificatePem,
      // every CA the gateway accepts: during a rotation the client can verify either's server certificate
      certificateChain: ca.trustedCertificatesPem,
      privateKey: issued.privateKeyPem,
      publicKey: issued.publicKeyPem,
      nodeUrl: `${this.deps.userNodeUrl.replace(/\/+$/, '')}/nodes/${userId}/${node.id}/`,
      serial: issued.serial,
      expiresAt: issued.notAfter.toISOString(),
    };
  }

  /** One page of the node's certificates, oldest first, and the cursor of the next (null after the last). */
  async list(userId: string, nodeId: string, limit: number, cursor?: string): Promise<{ certificates: CertificateView[]; nextCursor: string | null }> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    const afterSerial = cursor === undefined ? undefined : decodeCursor('certificate', cursor, /^[0-9a-f]{1,128}$/);
    if (afterSerial !== undefined && (await findCertificate(this.deps.db, afterSerial))?.node_id !== nodeId) throw staleCursor();
    const rows = await listNodeCertificates(this.deps.db, nodeId, { limit: limit + 1, afterSerial });
    const page = pageOf(rows, limit, (last) => encodeCursor('certificate', last.serial));
    return { certificates: page.items.map((r) => presentCertificate(r)), nextCursor: page.nextCursor };
  }

  async revoke(userId: string, nodeId: string, rawSerial: string): Promise<CertificateView> {
    const serial = normalizeSerial(rawSerial);
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    const row = await revokeCertificate(this.deps.db, serial, node.id);
    if (!row) throw new AppError('certificate_not_found', `node ${nodeId} has no certificate with serial ${serial}`);
    this.notifyRevoked(serial);
    return presentCertificate(row);
  }

  /** The operator's view: every certificate of a node, whoever owns it. */
  async listForOperator(nodeId: string): Promise<CertificateView[]> {
    if (!isId(nodeId)) throw new AppError('invalid_request', `"${nodeId.slice(0, 64)}" is not a node id (32 hex characters)`);
    if (!(await findNode(this.deps.db, nodeId))) throw nodeNotFound(nodeId);
    return (await listNodeCertificates(this.deps.db, nodeId)).map((r) => presentCertificate(r));
  }

  /** The operator's issue (`rln-cloud cert issue`): for the node's owner, whoever that is. */
  async issueForOperator(nodeId: string): Promise<IssuedClientCertificate> {
    if (!isId(nodeId)) throw new AppError('invalid_request', `"${nodeId.slice(0, 64)}" is not a node id (32 hex characters)`);
    const node = await findNode(this.deps.db, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    return this.issue(node.userId, node.id);
  }

  async revokeForOperator(rawSerial: string): Promise<CertificateView> {
    const serial = normalizeSerial(rawSerial);
    if (!(await findCertificate(this.deps.db, serial))) throw new AppError('certificate_not_found', `no certificate with serial ${serial}`);
    const row = (await revokeCertificate(this.deps.db, serial))!;
    this.notifyRevoked(serial);
    return presentCertificate(row);
  }

  private notifyRevoked(serial: string) {
    for (const listener of this.revokedListeners) listener(serial);
  }

  private async ownedLiveNode(userId: string, nodeId: string): Promise<Node> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    if (node.status === 'DESTROYED' || node.status === 'DESTROYING') {
      throw new AppError('node_destroyed', `node ${nodeId} is ${node.status}; no certificate can be issued for it`, { status: node.status });
    }
    return node;
  }
}
