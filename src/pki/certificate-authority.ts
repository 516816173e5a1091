// The service's own certificate authority: an ECDSA key and a self-signed CA certificate that
// sign the client certificates of the mutual-TLS gateway (bound to one user and one node) and,
// unless the operator gives one, the gateway's server certificate.
import { createHash, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';
import { importEcPrivateKey, privateKeyPem, publicKeyPem, type EcCurve } from './pem.ts';

const subtle = webcrypto.subtle;
/** Loaded on first use: loading a CA and serving TLS need only node:crypto. */
const loadX509 = async () => (await import('./x509.ts')).x509;

/** ECDSA P-256 with SHA-256: small keys, fast handshakes, accepted by every TLS stack we target. */
export const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

const EXTENDED_KEY_USAGE = { clientAuth: '1.3.6.1.5.5.7.3.2', serverAuth: '1.3.6.1.5.5.7.3.1' } as const;

/** Issued certificates start this long in the past, so a client whose clock lags still accepts them. */
const CLOCK_SKEW_MS = 60_000;

export interface IssuedCertificate {
  certificatePem: string;
  privateKeyPem: string;
  publicKeyPem: string;
  /** Lowercase hex, as recorded and looked up. */
  serial: string;
  /** SHA-256 of the DER certificate, lowercase hex. */
  fingerprint: string;
  notBefore: Date;
  notAfter: Date;
}

/** 128 random bits, positive and without a leading zero byte so every tool prints it the same way. */
export function newSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x10;
  return bytes.toString('hex');
}

export const fingerprintOf = (der: Buffer | ArrayBuffer) => createHash('sha256').update(Buffer.from(der as ArrayBuffer)).digest('hex');

/** The URI a client certificate names its binding with; the database record stays authoritative. */
export const clientCertificateUri = (userId: string, nodeId: string) => `urn:rln-cloud:user:${userId}:node:${nodeId}`;

export class CertificateAuthority {
  private signingCert: X509.X509Certificate | undefined;

  private constructor(
    /** The CA certificate that signs: the first of the file. */
    readonly certificatePem: string,
    /**
     * Every CA whose client certificates the gateway accepts, the signing one first: during a
     * rotation the file holds the new CA and, after it, the old one, so certificates the old one
     * issued keep working until they are re-issued (docs/DEPLOY.md, "Rotating the CA").
     */
    readonly trustedCertificatesPem: string,
    readonly notAfter: Date,
    private readonly signingKey: CryptoKey,
    private readonly curve: EcCurve,
  ) {}

  /** A new CA: ECDSA P-256, valid for `years`. Returns the PEM files to keep, and the CA. */
  static async create(commonName: string, years = 10): Promise<{ ca: CertificateAuthority; certificatePem: string; privateKeyPem: string }> {
    const x509 = await loadX509();
    const keys = (await subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as CryptoKeyPair;
    const notBefore = new Date(Date.now() - CLOCK_SKEW_MS);
    const notAfter = new Date(notBefore.getTime() + years * 365 * 86_400_000);
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: newSerial(),
      name: [{ CN: [commonName] }, { O: ['RLN Cloud'] }],
      notBefore,
      notAfter,
      signingAlgorithm: EC_P256,
      keys,
      extensions: [
        // pathLen 0: this CA signs end-entity certificates only, never another CA.
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const certificatePem = cert.toString('pem');
    const keyPem = await privateKeyPem(keys.privateKey);
    return { ca: await CertificateAuthority.fromPem(certificatePem, keyPem), certificatePem, privateKeyPem: keyPem };
  }

  /**
   * Loads a CA from PEM text and checks that it can serve: a CA certificate, its key, in date. The
   * text may go on with more CA certificates, accepted for client certificates but never signing.
   */
  static async fromPem(certificatePem: string, keyPem: string): Promise<CertificateAuthority> {
    const blocks = certificatePem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [certificatePem];
    let nodeCert: X509Certificate;
    try {
      nodeCert = new X509Certificate(blocks[0]!);
    } catch (err) {
      throw new Error(`the CA certificate is not a PEM X.509 certificate (${(err as Error).message})`);
    }
    const accepted = blocks.slice(1).map((pem, i) => {
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(pem);
      } catch (err) {
        throw new Error(`certificate ${i + 2} of the CA file is not a PEM X.509 certificate (${(err as Error).message})`);
      }
      if (!cert.ca) throw new Error(`certificate ${i + 2} of the CA file is not a CA certificate (basicConstraints cA is not set)`);
      return cert.toString().trim();
    });
    let imported;
    try {
      imported = await importEcPrivateKey(keyPem);
    } catch (err) {
      throw new Error(`the CA key cannot be used: ${(err as Error).message}`);
    }
    if (!nodeCert.ca) throw new Error('the CA certificate is not a CA certificate (basicConstraints cA is not set)');
    if (!nodeCert.checkPrivateKey(imported.keyObject)) throw new Error('the CA key does not belong to the CA certificate');
    if (Date.parse(nodeCert.validTo) <= Date.now()) throw new Error(`the CA certificate expired on ${nodeCert.validTo}`);
    const signing = nodeCert.toString().trim();
    return new CertificateAuthority(signing, [signing, ...accepted].join('\n'), new Date(nodeCert.validTo), imported.key, imported.curve);
  }

  /** A client certificate for the mutual-TLS gateway, bound to one user and one node. */
  async issueClientCertificate(input: { userId: string; nodeId: string; validitySeconds: number }): Promise<IssuedCertificate> {
    const notBefore = new Date(Date.now() - CLOCK_SKEW_MS);
    const notAfter = new Date(Math.min(Date.now() + input.validitySeconds * 1000, this.notAfter.getTime()));
    return this.issue({
      subject: [{ CN: [input.nodeId] }, { OU: [input.userId] }, { O: ['RLN Cloud'] }],
      notBefore,
      notAfter,
      usage: 'clientAuth',
      altNames: [{ type: 'url', value: clientCertificateUri(input.userId, input.nodeId) }],
    });
  }

  /** The mutual-TLS gateway's own certificate, for the host names and addresses clients use. */
  async issueServerCertificate(hosts: string[], days: number): Promise<IssuedCertificate> {
    const unique = [...new Set(hosts.map((h) => h.replace(/^\[|\]$/g, '')))];
    return this.issue({
      subject: [{ CN: [unique[0] ?? 'localhost'] }, { O: ['RLN Cloud'] }],
      notBefore: new Date(Date.now() - CLOCK_SKEW_MS),
      notAfter: new Date(Math.min(Date.now() + days * 86_400_000, this.notAfter.getTime())),
      usage: 'serverAuth',
      altNames: unique.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })),
    });
  }

  private async issue(spec: {
    subject: X509.JsonName;
    notBefore: Date;
    notAfter: Date;
    usage: keyof typeof EXTENDED_KEY_USAGE;
    altNames: X509.JsonGeneralNames;
  }): Promise<IssuedCertificate> {
    const x509 = await loadX509();
    this.signingCert ??= new x509.X509Certificate(this.certificatePem);
    // Leaf keys are P-256 whatever the CA's curve: what matters to clients is their own key size.
    const keys = (await subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as CryptoKeyPair;
    const serial = newSerial();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial,
      subject: spec.subject,
      issuer: this.signingCert.subject,
      notBefore: spec.notBefore,
      notAfter: spec.notAfter,
      signingAlgorithm: { name: 'ECDSA', hash: this.curve === 'P-384' ? 'SHA-384' : 'SHA-256' },
      publicKey: keys.publicKey,
      signingKey: this.signingKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([EXTENDED_KEY_USAGE[spec.usage]], false),
        new x509.SubjectAlternativeNameExtension(spec.altNames, false),
        await x509.AuthorityKeyIdentifierExtension.create(this.signingCert, false),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return {
      certificatePem: cert.toString('pem'),
      privateKeyPem: await privateKeyPem(keys.privateKey),
      publicKeyPem: await publicKeyPem(keys.publicKey),
      serial,
      fingerprint: fingerprintOf(cert.rawData),
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
    };
  }
}
