// Rotating the mutual-TLS gateway's CA as docs/DEPLOY.md ("Rotating the CA") says, through real
// TLS handshakes and restarts on the same database: (1) the file holds the old CA then the new one,
// the old key still signing: every certificate keeps working, and what is issued now hands the
// client both CAs; (2) the new CA first with its key: the certificates the old one issued are still
// accepted, new ones come from the new CA; (3) after re-issuing, the old CA leaves the file and its
// certificates stop at the handshake. A certificate from a CA never in the file is refused throughout.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { databaseLabel } from '../helpers/database.ts';
import { apiCaller } from '../helpers/server.ts';
import { startRestartableServer } from '../logs/restartable-server.ts';
import { rawRequest, tlsRequest, type ClientCredentials } from './gateway-client.ts';

type Issued = ClientCredentials & { serial: string };

describe(`rotating the mutual-TLS CA without breaking issued certificates on ${databaseLabel()}`, () => {
  let dir: string;
  let s: Awaited<ReturnType<typeof startRestartableServer>>;
  let token: string;
  let userId: string;
  let nodeId: string;
  let oldCa: { certificatePem: string; privateKeyPem: string };
  let newCa: { certificatePem: string; privateKeyPem: string };
  let stranger: Issued;
  const certFile = () => join(dir, 'ca.pem');
  const keyFile = () => join(dir, 'ca.key');
  /** What an operator does: new files in the Secret, then the replicas restart onto them. */
  const rotateTo = async (certificates: string[], key: string) => {
    writeFileSync(certFile(), certificates.join('\n'));
    writeFileSync(keyFile(), key);
    await s.restart();
    await untilRunning(); // the node's daemon restarts with the service
  };
  const untilRunning = async () => {
    const deadline = Date.now() + 60_000;
    while ((await call(`/api/nodes/${nodeId}`)).json.data.status !== 'RUNNING') {
      if (Date.now() > deadline) throw new Error('the node did not reach RUNNING');
      await new Promise((r) => setTimeout(r, 200));
    }
    // RUNNING is recorded from the daemon's process; its port answers a moment later (the bearer gateway tells).
    const viaBearer = () => rawRequest(s.config.nodeApiUrl, `/${userId}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${token}` } });
    const until = Date.now() + 30_000;
    while ((await viaBearer()).status !== 403) {
      if (Date.now() > until) throw new Error('the node does not answer through the bearer gateway');
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const call = (path: string, init: { method?: string; body?: unknown } = {}) => apiCaller(s.config.publicUrl)(path, { ...init, token });
  const issue = async (): Promise<Issued> => {
    const r = await call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST' });
    expect(r.status, r.text).toBe(200);
    return r.json;
  };
  /** A request through the gateway with `creds`, verifying its server certificate with `ca`: the node's status, or the handshake's error. */
  const through = async (creds: ClientCredentials, ca: string) => {
    try {
      const r = await tlsRequest(s.config.userNodeUrl, `/nodes/${userId}/${nodeId}/nodeinfo`, { ...creds, ca });
      return r.status;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    }
  };
  const issuerOf = (pem: string) => new X509Certificate(pem).issuer;
  const subjectOf = (pem: string) => new X509Certificate(pem).subject;
  const certificatesIn = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rln-ca-rotation-'));
    const [a, b, c] = [await CertificateAuthority.create('RLN Cloud node access CA 2025'), await CertificateAuthority.create('RLN Cloud node access CA 2026'), await CertificateAuthority.create('Somebody else')];
    oldCa = a;
    newCa = b;
    writeFileSync(certFile(), oldCa.certificatePem);
    writeFileSync(keyFile(), oldCa.privateKeyPem);
    s = await startRestartableServer({ CA_CERT_FILE: certFile(), CA_KEY_FILE: keyFile() });
    const accounts = s.server().services.accounts;
    const email = `rotation-${Date.now()}@example.com`;
    userId = (await accounts.createUser({ email, plan: 'starter' })).id;
    token = (await accounts.createToken(email, 'test')).token;
    const created = await call('/api/nodes', { method: 'POST', body: { name: 'rotated', network: 'regtest' } });
    expect(created.status, created.text).toBe(200);
    nodeId = created.json.data.nodeId;
    await untilRunning();
    // A certificate of the right shape from a CA the service never held.
    const foreign = await c.ca.issueClientCertificate({ userId, nodeId, validitySeconds: 3600 });
    stranger = { certificate: foreign.certificatePem, privateKey: foreign.privateKeyPem, certificateChain: c.certificatePem, serial: foreign.serial };
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the old certificates working through both steps, issues from the new CA after the switch, and drops the old CA last', async () => {
    const before = await issue();
    expect(certificatesIn(before.certificateChain)).toBe(1);
    // The node answers (403: locked), i.e. the gateway let the certificate through.
    expect(await through(before, before.certificateChain)).toBe(403);

    // Step 1: the new CA beside the old one, which still signs.
    await rotateTo([oldCa.certificatePem, newCa.certificatePem], oldCa.privateKeyPem);
    expect(await through(before, before.certificateChain)).toBe(403);
    const during = await issue();
    expect(issuerOf(during.certificate)).toBe(subjectOf(oldCa.certificatePem));
    expect(certificatesIn(during.certificateChain)).toBe(2);
    expect(await through(during, during.certificateChain)).toBe(403);
    expect(await through(stranger, during.certificateChain)).not.toBe(403);

    // Step 2: the new CA signs; the old one stays accepted.
    await rotateTo([newCa.certificatePem, oldCa.certificatePem], newCa.privateKeyPem);
    // Issued before the rotation and during step 1: still accepted. The gateway's own certificate
    // now comes from the new CA, which the chain handed out in step 1 holds.
    expect(await through(before, during.certificateChain)).toBe(403);
    expect(await through(during, during.certificateChain)).toBe(403);
    const after = await issue();
    expect(issuerOf(after.certificate)).toBe(subjectOf(newCa.certificatePem));
    expect(await through(after, after.certificateChain)).toBe(403);
    expect(await through(stranger, after.certificateChain)).not.toBe(403);

    // Step 3, once every client re-issued: the old CA leaves; its certificates stop at the handshake.
    await rotateTo([newCa.certificatePem], newCa.privateKeyPem);
    expect(await through(after, after.certificateChain)).toBe(403);
    expect(await through(after, newCa.certificatePem)).toBe(403);
    for (const old of [before, during]) expect(await through(old, after.certificateChain)).not.toBe(403);
    expect(certificatesIn((await issue()).certificateChain)).toBe(1);
  }, 180_000);

  it('refuses to start on a CA file whose further certificates are no CA, naming which', async () => {
    const leaf = (await CertificateAuthority.fromPem(newCa.certificatePem, newCa.privateKeyPem)).issueServerCertificate(['localhost'], 1);
    await expect(CertificateAuthority.fromPem(`${newCa.certificatePem}\n${(await leaf).certificatePem}`, newCa.privateKeyPem)).rejects.toThrow(
      'certificate 2 of the CA file is not a CA certificate',
    );
  });
});
