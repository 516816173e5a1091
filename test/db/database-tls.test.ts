// TLS to PostgreSQL as docs/DEPLOY.md tells a real cluster to use it: a managed database's
// certificate comes from the provider's CA, which Node does not trust. Here a forwarder in front of
// the test PostgreSQL ends TLS with a certificate from a CA this test makes (PostgreSQL's way: the
// client asks with an 8-byte SSLRequest, the server answers 'S', then the TLS handshake; after it
// the forwarder passes the plain protocol to the real server, which never sees the SSLRequest).
// The URL the guide gives (sslmode=verify-full&sslrootcert=<the CA bundle>, read from
// DATABASE_URL_FILE as the Deployment mounts it) serves the API; sslmode=require without the CA
// is refused, as the guide warns; a client that does not ask for TLS gets nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/database.ts';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer } from '../helpers/server.ts';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

/** The protocol's SSLRequest: length 8, code 80877103. */
const isSslRequest = (b: Buffer) => b.length === 8 && b.readInt32BE(0) === 8 && b.readInt32BE(4) === 80877103;

/** A TLS-only PostgreSQL endpoint in front of `upstream`; counts the sessions it ended TLS for. */
async function tlsForwarder(upstream: { host: string; port: number }, material: { cert: string; key: string }) {
  const context = tls.createSecureContext({ cert: material.cert, key: material.key });
  const stats = { tlsSessions: 0, refused: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    let first = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      first = Buffer.concat([first, d]);
      if (first.length < 8) return;
      client.off('data', onData);
      if (!isSslRequest(first.subarray(0, 8)) || first.length > 8) {
        // hostssl only: a plain StartupMessage is refused
        stats.refused++;
        client.destroy();
        return;
      }
      client.pause();
      client.write('S', () => {
        const secure = new tls.TLSSocket(client, { isServer: true, secureContext: context });
        secure.on('error', () => client.destroy());
        secure.once('secure', () => {
          stats.tlsSessions++;
          const real = net.connect(upstream.port, upstream.host);
          sockets.add(real);
          real.on('error', () => secure.destroy());
          real.on('close', () => {
            sockets.delete(real);
            secure.destroy();
          });
          secure.on('close', () => real.destroy());
          secure.pipe(real);
          real.pipe(secure);
        });
        client.resume();
      });
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stats,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

onPostgres('TLS to PostgreSQL with a private CA (a managed database)', () => {
  let dir: string;
  let database: TestDatabase;
  let forwarder: Awaited<ReturnType<typeof tlsForwarder>>;
  let caFile: string;
  /** The test database's URL, through the forwarder, with `query` as its parameters. */
  const urlVia = (query: string) => {
    const url = new URL(database.url!);
    url.hostname = 'localhost';
    url.port = String(forwarder.port);
    url.search = query;
    return url.toString();
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rln-db-tls-'));
    // The provider's CA, and the database's certificate it issued for the host the URL names.
    const { ca, certificatePem } = await CertificateAuthority.create('Test database provider CA');
    const serverCert = await ca.issueServerCertificate(['localhost'], 1);
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, certificatePem);
    database = await createTestDatabase();
    const real = new URL(process.env.TEST_DATABASE_URL!);
    forwarder = await tlsForwarder({ host: real.hostname, port: Number(real.port || 5432) }, { cert: serverCert.certificatePem, key: serverCert.privateKeyPem });
  });

  afterAll(async () => {
    await forwarder?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves the API on sslmode=verify-full with the provider's CA as sslrootcert, from DATABASE_URL_FILE", async () => {
    const urlFile = join(dir, 'url');
    writeFileSync(urlFile, urlVia(`?sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`));
    const before = forwarder.stats.tlsSessions;
    const t = await startTestServer({ DATABASE_URL: undefined as unknown as string, DATABASE_URL_FILE: urlFile });
    try {
      const user = await t.createUser();
      const res = await t.call('/api/nodes', { token: user.token });
      expect(res.status).toBe(200);
      expect(t.config.databaseUrl).toContain('sslmode=verify-full');
      expect(forwarder.stats.tlsSessions).toBeGreaterThan(before);
    } finally {
      await t.stop();
    }
  });

  it('refuses sslmode=require without the CA (Node trusts only public CAs), and a client that does not ask for TLS', async () => {
    // What the service opens at start (openDatabase), without a server whose start fails.
    await expect(openPostgres(urlVia('?sslmode=require'))).rejects.toThrow(/unable to verify the first certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE/);
    const refused = forwarder.stats.refused;
    await expect(openPostgres(urlVia('?sslmode=disable'))).rejects.toThrow();
    expect(forwarder.stats.refused).toBeGreaterThan(refused);
  });

  it('refuses the right CA for the wrong host name (verify-full checks the name)', async () => {
    const url = new URL(urlVia(`?sslmode=verify-full&sslrootcert=${encodeURIComponent(caFile)}`));
    url.hostname = '127.0.0.1'; // the certificate names localhost only
    await expect(openPostgres(url.toString())).rejects.toThrow(/altnames|Hostname\/IP does not match/i);
  });
});
