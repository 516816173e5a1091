// Where the certificate authority comes from: files the operator names (CA_CERT_FILE, CA_KEY_FILE;
// what several replicas must share), or DATA_DIR/pki, created at the first start. The key file is
// private (0600 in a 0700 directory): whoever reads it can mint access to every node.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../logger.ts';
import { CertificateAuthority } from './certificate-authority.ts';

export const caDir = (dataDir: string) => join(dataDir, 'pki');

/** The settings the CA and the gateway's certificate come from (CA_*, MTLS_*, DATA_DIR, HOST, USER_NODE_URL). */
export interface CaStoreSettings {
  dataDir: string;
  host: string;
  userNodeUrl: string;
  nodeAccess: { caCertFile: string | undefined; caKeyFile: string | undefined; mtlsCertFile: string | undefined; mtlsKeyFile: string | undefined };
}

/** The CA where a serving process keeps or is given it, without creating one (the operator CLI). */
export async function loadExistingCertificateAuthority(config: CaStoreSettings): Promise<CertificateAuthority | undefined> {
  const { caCertFile, caKeyFile } = config.nodeAccess;
  const [certPath, keyPath] = caCertFile && caKeyFile ? [caCertFile, caKeyFile] : [join(caDir(config.dataDir), 'ca.pem'), join(caDir(config.dataDir), 'ca.key')];
  if (!existsSync(certPath) || !existsSync(keyPath)) return undefined;
  return CertificateAuthority.fromPem(readFileSync(certPath, 'utf8'), readFileSync(keyPath, 'utf8'));
}

export async function loadOrCreateCertificateAuthority(config: CaStoreSettings, log: Logger): Promise<CertificateAuthority> {
  const { caCertFile, caKeyFile } = config.nodeAccess;
  if (caCertFile && caKeyFile) {
    try {
      return await CertificateAuthority.fromPem(readFileSync(caCertFile, 'utf8'), readFileSync(caKeyFile, 'utf8'));
    } catch (err) {
      throw new Error(`CA_CERT_FILE / CA_KEY_FILE: ${(err as Error).message}`);
    }
  }
  const dir = caDir(config.dataDir);
  const certPath = join(dir, 'ca.pem');
  const keyPath = join(dir, 'ca.key');
  if (existsSync(certPath) || existsSync(keyPath)) {
    try {
      return await CertificateAuthority.fromPem(readFileSync(certPath, 'utf8'), readFileSync(keyPath, 'utf8'));
    } catch (err) {
      throw new Error(`the certificate authority in ${dir} cannot be used: ${(err as Error).message}`);
    }
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const created = await CertificateAuthority.create('RLN Cloud node access CA');
  // The key first and exclusively ('wx'): a half-written pair is detected above at the next start.
  writeFileSync(keyPath, created.privateKeyPem, { mode: 0o600, flag: 'wx' });
  writeFileSync(certPath, created.certificatePem, { mode: 0o600, flag: 'wx' });
  log.info({ certificate: certPath }, 'created the node access certificate authority');
  return created.ca;
}

export interface ServerTlsMaterial {
  certificatePem: string;
  privateKeyPem: string;
}

/** Reissue the gateway's own certificate when it has less than this left. */
const SERVER_CERT_RENEW_MS = 30 * 86_400_000;

/**
 * The mutual-TLS gateway's own certificate: the operator's, or one from the CA kept in
 * DATA_DIR/pki and reissued only when it no longer fits (another CA, other host names, or less
 * than 30 days left), so a start does not pay for signing one.
 */
export async function serverTlsMaterial(config: CaStoreSettings, ca: CertificateAuthority): Promise<ServerTlsMaterial> {
  const { mtlsCertFile, mtlsKeyFile } = config.nodeAccess;
  if (mtlsCertFile && mtlsKeyFile) {
    return { certificatePem: readFileSync(mtlsCertFile, 'utf8'), privateKeyPem: readFileSync(mtlsKeyFile, 'utf8') };
  }
  const hosts = [new URL(config.userNodeUrl).hostname, 'localhost', '127.0.0.1', '::1'];
  if (config.host !== '0.0.0.0' && config.host !== '::') hosts.push(config.host);
  const dir = caDir(config.dataDir);
  const certPath = join(dir, 'gateway.pem');
  const keyPath = join(dir, 'gateway.key');
  const kept = readKeptServerCertificate(certPath, keyPath, ca, hosts);
  if (kept) return kept;
  const issued = await ca.issueServerCertificate(hosts, 365);
  const material = { certificatePem: `${issued.certificatePem}\n${ca.certificatePem}`, privateKeyPem: issued.privateKeyPem };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyPath, material.privateKeyPem, { mode: 0o600 });
  chmodSync(keyPath, 0o600);
  writeFileSync(certPath, material.certificatePem, { mode: 0o600 });
  return material;
}

function readKeptServerCertificate(certPath: string, keyPath: string, ca: CertificateAuthority, hosts: string[]): ServerTlsMaterial | undefined {
  try {
    const certificatePem = readFileSync(certPath, 'utf8');
    const privateKeyPem = readFileSync(keyPath, 'utf8');
    const cert = new X509Certificate(certificatePem);
    const issuer = new X509Certificate(ca.certificatePem);
    const fits =
      cert.checkIssued(issuer) &&
      cert.verify(issuer.publicKey) &&
      cert.checkPrivateKey(createPrivateKey(privateKeyPem)) &&
      Date.parse(cert.validTo) - Date.now() > SERVER_CERT_RENEW_MS &&
      hosts.every((h) => (isIP(h.replace(/^\[|\]$/g, '')) ? cert.checkIP(h.replace(/^\[|\]$/g, '')) : cert.checkHost(h)) !== undefined);
    return fits ? { certificatePem, privateKeyPem } : undefined;
  } catch {
    return undefined; // missing or unreadable: issue a new one
  }
}
