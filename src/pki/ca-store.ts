// Where the certificate authority comes from: files the operator names (CA_CERT_FILE, CA_KEY_FILE;
// what several replicas must share), or DATA_DIR/pki, created at the first start. The key file is
// private (0600 in a 0700 directory): whoever reads it can mint access to every node.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { CertificateAuthority } from './certificate-authority.ts';

export const caDir = (dataDir: string) => join(dataDir, 'pki');

export async function loadOrCreateCertificateAuthority(config: Config, log: Logger): Promise<CertificateAuthority> {
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

/** The mutual-TLS gateway's own certificate: the operator's, or a fresh one from the CA. */
export async function serverTlsMaterial(config: Config, ca: CertificateAuthority): Promise<ServerTlsMaterial> {
  const { mtlsCertFile, mtlsKeyFile } = config.nodeAccess;
  if (mtlsCertFile && mtlsKeyFile) {
    return { certificatePem: readFileSync(mtlsCertFile, 'utf8'), privateKeyPem: readFileSync(mtlsKeyFile, 'utf8') };
  }
  const hosts = [new URL(config.userNodeUrl).hostname, 'localhost', '127.0.0.1', '::1'];
  if (config.host !== '0.0.0.0' && config.host !== '::') hosts.push(config.host);
  // Issued anew at every start, so it never needs renewing on disk; a year outlasts any uptime.
  const issued = await ca.issueServerCertificate(hosts, 365);
  return { certificatePem: `${issued.certificatePem}\n${ca.certificatePem}`, privateKeyPem: issued.privateKeyPem };
}
