import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { loadOrCreateCertificateAuthority, serverTlsMaterial } from './ca-store.ts';

describe('the gateway server certificate kept in DATA_DIR', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const setup = async (env: Record<string, string> = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rln-ca-'));
    dirs.push(dataDir);
    const config = loadConfig({ DATA_DIR: dataDir, ...env });
    return { config, ca: await loadOrCreateCertificateAuthority(config, createLogger('silent')) };
  };

  it('is issued once and reused at the next start', async () => {
    const { config, ca } = await setup();
    const first = await serverTlsMaterial(config, ca);
    const again = await serverTlsMaterial(config, ca);
    expect(again).toEqual(first);
    const leaf = new X509Certificate(first.certificatePem);
    expect(leaf.checkIssued(new X509Certificate(ca.certificatePem))).toBe(true);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
  });

  it('is reissued when the host names change or another CA signs', async () => {
    const { config, ca } = await setup();
    const first = await serverTlsMaterial(config, ca);
    const renamed = loadConfig({ DATA_DIR: config.dataDir, USER_NODE_URL: 'https://gw.example:8443' });
    const second = await serverTlsMaterial(renamed, ca);
    expect(second.certificatePem).not.toBe(first.certificatePem);
    expect(new X509Certificate(second.certificatePem).checkHost('gw.example')).toBe('gw.example');

    const other = await setup();
    const third = await serverTlsMaterial(renamed, other.ca);
    expect(new X509Certificate(third.certificatePem).checkIssued(new X509Certificate(other.ca.certificatePem))).toBe(true);
  });
});
