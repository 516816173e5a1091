// `rln-cloud cert issue <node-id> [--dir <dir>]` saves what a client needs for the mutual-TLS
// gateway as files, the names the curl examples of docs/NODE-ACCESS.md use: node.key (the private key, 0600),
// node.pem (the certificate) and ca.pem (the CA that signed it and the gateway's certificate).
// Existing files are never overwritten: a second certificate goes into another directory.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppError } from '../errors.ts';
import type { IssuedClientCertificate } from '../pki/client-certificates.ts';

export function saveCredentials(issued: IssuedClientCertificate, dir: string) {
  const at = resolve(dir);
  mkdirSync(at, { recursive: true, mode: 0o700 });
  const files = { key: join(at, 'node.key'), certificate: join(at, 'node.pem'), ca: join(at, 'ca.pem') };
  try {
    writeFileSync(files.key, issued.privateKey, { mode: 0o600, flag: 'wx' });
    writeFileSync(files.certificate, issued.certificate, { mode: 0o644, flag: 'wx' });
    writeFileSync(files.ca, issued.certificateChain, { mode: 0o644, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new AppError('invalid_request', `${(err as NodeJS.ErrnoException).path} exists already; give another directory with --dir (the certificate ${issued.serial} was issued: revoke it with rln-cloud cert revoke ${issued.serial})`);
    }
    throw err;
  }
  return {
    serial: issued.serial,
    expiresAt: issued.expiresAt,
    nodeUrl: issued.nodeUrl,
    files,
    try: `curl --cert ${files.certificate} --key ${files.key} --cacert ${files.ca} ${issued.nodeUrl}nodeinfo`,
  };
}
