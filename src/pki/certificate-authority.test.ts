import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CertificateAuthority, clientCertificateUri } from './certificate-authority.ts';
import { normalizeSerial } from './client-certificates.ts';

const userId = 'a'.repeat(32);
const nodeId = 'b'.repeat(32);

describe('CertificateAuthority', () => {
  it('creates an ECDSA P-256 CA and issues client certificates bound to a user and a node', async () => {
    const { ca, certificatePem } = await CertificateAuthority.create('Test CA');
    const caCert = new X509Certificate(certificatePem);
    expect(caCert.ca).toBe(true);
    expect(caCert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');

    const issued = await ca.issueClientCertificate({ userId, nodeId, validitySeconds: 3600 });
    const leaf = new X509Certificate(issued.certificatePem);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth only
    expect(leaf.subjectAltName).toBe(`URI:${clientCertificateUri(userId, nodeId)}`);
    expect(leaf.serialNumber.toLowerCase()).toBe(issued.serial);
    expect(leaf.fingerprint256.replaceAll(':', '').toLowerCase()).toBe(issued.fingerprint);
    expect(leaf.checkPrivateKey((await import('node:crypto')).createPrivateKey(issued.privateKeyPem))).toBe(true);
    expect(Math.abs(issued.notAfter.getTime() - (Date.now() + 3600_000))).toBeLessThan(2000);
  });

  it('issues a server certificate for host names and addresses', async () => {
    const { ca } = await CertificateAuthority.create('Test CA');
    const server = new X509Certificate((await ca.issueServerCertificate(['gw.example', '127.0.0.1', '[::1]'], 30)).certificatePem);
    expect(server.subjectAltName).toBe('DNS:gw.example, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(server.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('loads a CA from PEM and refuses a key of another CA, a leaf certificate or garbage', async () => {
    const a = await CertificateAuthority.create('A');
    const b = await CertificateAuthority.create('B');
    await expect(CertificateAuthority.fromPem(a.certificatePem, a.privateKeyPem)).resolves.toBeInstanceOf(CertificateAuthority);
    await expect(CertificateAuthority.fromPem(a.certificatePem, b.privateKeyPem)).rejects.toThrow(/does not belong/);
    const leaf = await a.ca.issueClientCertificate({ userId, nodeId, validitySeconds: 60 });
    await expect(CertificateAuthority.fromPem(leaf.certificatePem, leaf.privateKeyPem)).rejects.toThrow(/not a CA certificate/);
    await expect(CertificateAuthority.fromPem('nope', a.privateKeyPem)).rejects.toThrow(/not a PEM X.509/);
    await expect(CertificateAuthority.fromPem(a.certificatePem, 'nope')).rejects.toThrow(/CA key/);
  });

  it('normalises serials as openssl and node print them', () => {
    expect(normalizeSerial('1E:24:77')).toBe('1e2477');
    expect(() => normalizeSerial('../x')).toThrow(/serial/);
  });
});
