// The client's real address behind a load balancer (TRUSTED_PROXIES), on every listener over real
// sockets: the management API and the bearer gateway read X-Forwarded-For from a trusted peer only;
// the mutual-TLS gateway (TLS passthrough, no headers a proxy could add) takes a PROXY protocol
// header (v1, v2) from a trusted peer only and cuts a connection that sends one from anyone else.
// The address is what the audit trail records and what the sign-in throttle counts per address.
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1ProxyProtocol, V2ProxyProtocol, Command, TransportProtocol, IPv4ProxyAddress, IPv4Address, Peer, INETProtocol } from 'proxy-protocol-js';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { itBelievesOnlyTrustedProxies, TRUSTED_PEER, UNTRUSTED_PEER } from '../helpers/security.ts';
import type { ClientCredentials } from './gateway-client.ts';

const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  json: any;
}

/** One HTTP request over `connect()`'s connection (a plain socket from a chosen address, or TLS over one). */
function request(url: string, connect: () => net.Socket, opts: { method?: string; path: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        path: opts.path,
        method: opts.method ?? 'GET',
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        createConnection: connect,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode!, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const plainFrom = (url: string, peer: string) => () => {
  const { hostname, port } = new URL(url);
  return net.connect({ host: hostname, port: Number(port), localAddress: peer });
};

const v2Header = (client: string) =>
  Buffer.from(
    new V2ProxyProtocol(
      Command.PROXY,
      TransportProtocol.STREAM,
      new IPv4ProxyAddress(IPv4Address.createFrom(client.split('.').map(Number)), 51234, IPv4Address.createFrom([10, 0, 0, 1]), 8443),
    ).build(),
  );
const v1Header = (client: string) => Buffer.from(new V1ProxyProtocol(INETProtocol.TCP4, new Peer(client, 51234), new Peer('10.0.0.1', 8443)).build(), 'latin1');

describe(`the client's address behind a proxy, on every listener, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  let cert: ClientCredentials;

  beforeAll(async () => {
    t = await startTestServer({ TRUSTED_PROXIES: TRUSTED_PEER, MTLS_PROXY_PROTOCOL: 'on', NODE_API_TIMEOUT_MS: '5000' });
    alice = await t.createUser();
    await t.server.services.accounts.setPassword(alice.email, PASSWORD);
    [nodeId] = await createNodes(t, alice, [{ name: 'behind-a-proxy' }]);
    const issued = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token });
    expect(issued.status, issued.text).toBe(200);
    cert = issued.json;
  });
  afterAll(() => t?.stop());

  const newestId = async () => (await t.call('/api/audit-events?limit=1', { token: alice.token })).json.events[0]?.id ?? '0';
  /** The source address of the first `action` recorded after event `before` (the gateways record once they answered). */
  const recordedAfter = async (before: string, action: string): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      const events: any[] = (await t.call('/api/audit-events?limit=50', { token: alice.token })).json.events;
      const found = events.find((e) => BigInt(e.id) > BigInt(before) && e.action === action);
      if (found) return found.sourceIp;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${action} event was recorded`);
  };

  const apiFrom = (peer: string, opts: Parameters<typeof request>[2]) => request(t.base, plainFrom(t.base, peer), opts);
  const unlockPath = () => `/${alice.id}/${nodeId}/unlock`;
  /** A TLS connection with alice's certificate over a socket from `peer` that first sends `header`. */
  const mtlsFrom = (peer: string, header?: Buffer) => () => {
    const socket = plainFrom(t.config.userNodeUrl, peer)();
    if (header) socket.write(header);
    return tls.connect({ socket, host: new URL(t.config.userNodeUrl).hostname, cert: cert.certificate, key: cert.privateKey, ca: cert.certificateChain });
  };
  const mtlsUnlock = async (connect: () => net.Socket, headers: Record<string, string> = {}) => {
    const before = await newestId();
    try {
      await request(t.config.userNodeUrl, connect, { method: 'POST', path: `/nodes${unlockPath()}`, body: { password: 'wrong-password' }, headers });
    } catch {
      return 'refused';
    }
    return recordedAfter(before, 'node.unlock');
  };

  describe('the management API reads X-Forwarded-For from a trusted proxy only', () => {
    itBelievesOnlyTrustedProxies({
      name: 'an audited API call (a certificate issued)',
      untrustedClaim: 'ignored',
      async attribute(peer, claimed) {
        const before = await newestId();
        const r = await apiFrom(peer, { method: 'POST', path: `/api/nodes/${nodeId}/generate-cert`, headers: { authorization: `Bearer ${alice.token}`, 'x-forwarded-for': claimed } });
        expect(r.status).toBe(200);
        return recordedAfter(before, 'certificate.issued');
      },
    });

    it("counts failed sign-ins per client address: another address's 30 do not lock the real user out, and the attacker's own are", async () => {
      const signIn = (peer: string, client: string, email: string, password = 'wrong password') =>
        apiFrom(peer, { method: 'POST', path: '/api/session', body: { email, password }, headers: { 'x-forwarded-for': client } });
      // Through the load balancer: 30 failures from one address, each on another email (the per-email limit is 5).
      for (let i = 0; i < 30; i++) expect((await signIn(TRUSTED_PEER, '198.51.100.66', `nobody${i}@example.com`)).status).toBe(401);
      expect((await signIn(TRUSTED_PEER, '198.51.100.66', 'nobody-else@example.com')).status).toBe(429);
      const before = await newestId();
      const real = await signIn(TRUSTED_PEER, '198.51.100.7', alice.email, PASSWORD);
      expect(real.status).toBe(200);
      expect(await recordedAfter(before, 'session.sign_in')).toBe('198.51.100.7');
      // Straight from an untrusted peer, a different X-Forwarded-For on each try is no way past the limit.
      for (let i = 0; i < 30; i++) expect((await signIn(UNTRUSTED_PEER, `192.0.2.${i + 1}`, `stranger${i}@example.com`)).status).toBe(401);
      expect((await signIn(UNTRUSTED_PEER, '192.0.2.200', alice.email, PASSWORD)).status).toBe(429);
    });
  });

  describe('the bearer gateway reads X-Forwarded-For from a trusted proxy only', () => {
    itBelievesOnlyTrustedProxies({
      name: 'an unlock through the bearer gateway',
      untrustedClaim: 'ignored',
      async attribute(peer, claimed) {
        const before = await newestId();
        await request(t.config.nodeApiUrl, plainFrom(t.config.nodeApiUrl, peer), {
          method: 'POST',
          path: unlockPath(),
          body: { password: 'wrong-password' },
          headers: { authorization: `Bearer ${alice.token}`, 'x-forwarded-for': claimed },
        });
        return recordedAfter(before, 'node.unlock');
      },
    });
  });

  describe('the mutual-TLS gateway takes a PROXY protocol header from a trusted proxy only', () => {
    itBelievesOnlyTrustedProxies({
      name: 'an unlock through the mutual-TLS gateway (PROXY v2)',
      untrustedClaim: 'refused',
      attribute: (peer, claimed) => mtlsUnlock(mtlsFrom(peer, v2Header(claimed))),
    });

    it('takes a version 1 header from a trusted proxy too', async () => {
      expect(await mtlsUnlock(mtlsFrom(TRUSTED_PEER, v1Header('198.51.100.21')))).toBe('198.51.100.21');
    });

    it("serves a trusted or untrusted peer that sends no header as the client, and never believes X-Forwarded-For (TLS passes the proxy untouched: it is the client's own)", async () => {
      expect(await mtlsUnlock(mtlsFrom(TRUSTED_PEER), { 'x-forwarded-for': '198.51.100.22' })).toBe(TRUSTED_PEER);
      expect(await mtlsUnlock(mtlsFrom(UNTRUSTED_PEER), { 'x-forwarded-for': '198.51.100.23' })).toBe(UNTRUSTED_PEER);
    });

    it('cuts a connection whose header breaks the specification, even from a trusted proxy', async () => {
      expect(await mtlsUnlock(mtlsFrom(TRUSTED_PEER, Buffer.from('PROXY TCP4 not-an-address 10.0.0.1 1 2\r\n')))).toBe('refused');
    });
  });
});
