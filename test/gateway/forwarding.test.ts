// The bearer gateway's forwarding, against a tiny echo server standing in for a node so the test
// sees exactly what a node receives: credentials and hop-by-hop headers never pass, spoofed
// X-Forwarded-* headers are replaced, method, query, body and content type pass intact, and the
// node's status, headers and body come back unchanged. Also: body limits both ways, a node that
// refuses (502) or hangs (504), pooled connections, and the unlock body the gateway composes.
import { gatewayError } from '../helpers/gateway-error.ts';
import http from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountService } from '../../src/accounts/service.ts';
import { loadConfig } from '../../src/config.ts';
import { insertNode, updateNode } from '../../src/db/nodes.ts';
import { newId } from '../../src/auth/tokens.ts';
import { NodeService } from '../../src/nodes/service.ts';
import { createBearerGateway } from '../../src/gateway/gateway-server.ts';
import { NodeAccess } from '../../src/gateway/node-access.ts';
import { RlnClient } from '../../src/rln/client.ts';
import { NodeUnlocker } from '../../src/nodes/unlock/node-unlocker.ts';
import { NodePaths } from '../../src/nodes/paths/node-paths.ts';
import { NodeDaemons } from '../../src/nodes/node-daemons.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';
import { freePort } from '../helpers/ports.ts';
import { rawRequest, rawSocket } from './gateway-client.ts';

interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
  remotePort: number;
}

const MAX_REQUEST = 256 * 1024;
const MAX_RESPONSE = 512 * 1024;
const SECRET = 'correct-horse-battery-staple';

describe(`gateway forwarding on ${databaseLabel()}`, () => {
  let db: Awaited<ReturnType<typeof openMigratedTestDb>>;
  let gateway: http.Server;
  let echo: http.Server;
  let hang: http.Server;
  let base: string;
  let token: string;
  let userId: string;
  const nodeIds = { echo: '', down: '', hang: '' };
  const seen: Seen[] = [];
  let logText = '';
  let rln: RlnClient;

  const auth = () => ({ authorization: `Bearer ${token}` });
  const path = (node: keyof typeof nodeIds, route: string) => `/${userId}/${nodeIds[node]}/${route}`;

  beforeAll(async () => {
    db = await openMigratedTestDb();
    echo = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const s: Seen = { method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString(), remotePort: req.socket.remotePort! };
        seen.push(s);
        if (req.url === '/teapot') {
          res.writeHead(418, 'Short And Stout', [['Content-Type', 'text/plain'], ['X-Node-Header', 'yes'], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2'], ['Connection', 'X-Hop'], ['X-Hop', 'dropped']].flat());
          return res.end('teapot body');
        }
        if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': MAX_RESPONSE + 1 });
          return res.end(Buffer.alloc(MAX_RESPONSE + 1));
        }
        if (req.url === '/big-chunked') {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          for (let i = 0; i < 8; i++) res.write(Buffer.alloc(MAX_RESPONSE / 4));
          return res.end();
        }
        if (req.url === '/unlock') return res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: s.method, url: s.url, body: s.body }));
      });
    });
    hang = http.createServer(() => {}); // accepts, never answers
    const echoPort = await freePort();
    const hangPort = await freePort();
    const downPort = await freePort();
    await new Promise<void>((r) => echo.listen(echoPort, '127.0.0.1', r));
    await new Promise<void>((r) => hang.listen(hangPort, '127.0.0.1', r));

    const accounts = new AccountService(db.db);
    const user = await accounts.createUser({ email: `fwd-${Date.now()}@example.com` });
    userId = user.id;
    token = (await accounts.createToken(user.email)).token;
    await db.db.query(`INSERT INTO image_versions (version) VALUES ('v1')`);
    for (const [name, port] of [['echo', echoPort], ['down', downPort], ['hang', hangPort]] as const) {
      const node = await insertNode(db.db, { id: newId(), userId: userId, name, network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1', settings: {}, restPort: port, peerPort: port + 1 });
      await updateNode(db.db, node.id, { status: 'RUNNING' });
      nodeIds[name] = node.id;
    }

    const config = loadConfig({});
    const log = pino({ level: 'trace' }, new Writable({ write: (c, _e, cb) => ((logText += c.toString()), cb()) }));
    rln = new RlnClient({ timeoutMs: 800, maxRequestBytes: MAX_REQUEST, maxResponseBytes: MAX_RESPONSE });
    // This test sets no webhook URL, so the check has nothing to refuse; it creates no node, so it needs no ports.
    const nodes = new NodeService({ db: db.db, config, runtime: { assignPorts: async () => undefined }, webhooks: { checkWebhookUrl: async (url) => url } });
    const daemons = new NodeDaemons(
      { endpoint: (spec) => ({ host: '127.0.0.1', port: spec.restPort! }), storageFiles: { clientBackupPath: (_nodeId, name) => `/nonexistent/${name}`, prepareClientBackups: async () => {} } },
      rln,
      undefined, // the upstreams here are this test's own servers, which check no Biscuit
    );
    const unlocker = new NodeUnlocker({ db: db.db, config: config.nodeAccess, nodes, daemons, log });
    const nodePaths = new NodePaths({ unlocker, nodes, daemons, log });
    gateway = createBearerGateway({ access: new NodeAccess({ db: db.db, accounts }), rln, nodePaths, clientTimeoutMs: 1500, log });
    const port = await freePort();
    await new Promise<void>((r) => gateway.listen(port, '127.0.0.1', r));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const s of [gateway, echo, hang]) {
      s?.closeAllConnections();
      await new Promise((r) => s?.close(r));
    }
    await rln?.close();
    await db?.close();
  });

  const last = () => seen[seen.length - 1]!;
  const values = (s: Seen, name: string) => {
    const out: string[] = [];
    for (let i = 0; i < s.rawHeaders.length; i += 2) if (s.rawHeaders[i]!.toLowerCase() === name) out.push(s.rawHeaders[i + 1]!);
    return out;
  };

  it('passes method, query, body and content type intact', async () => {
    const r = await rawRequest(base, path('echo', 'some/route?x=1&y=a%20b'), {
      method: 'PATCH',
      headers: { ...auth(), 'content-type': 'application/x-custom; charset=latin1' },
      body: 'payload\u0000bytes',
    });
    expect(r.status).toBe(200);
    expect(last()).toMatchObject({ method: 'PATCH', url: '/some/route?x=1&y=a%20b', body: 'payload\u0000bytes' });
    expect(values(last(), 'content-type')).toEqual(['application/x-custom; charset=latin1']);
  });

  it('never forwards the Authorization header, cookies, hop-by-hop or spoofed forwarding headers', async () => {
    await rawRequest(base, path('echo', 'nodeinfo'), {
      headers: {
        ...auth(),
        cookie: 'rlnc_session=abc',
        connection: 'keep-alive, X-Private',
        'x-private': 'hop',
        'keep-alive': 'timeout=100',
        te: 'trailers',
        'proxy-authorization': 'Basic eDp5',
        'x-forwarded-for': '6.6.6.6',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'gopher',
        forwarded: 'for=6.6.6.6',
        'x-real-ip': '6.6.6.6',
        'x-end-to-end': 'kept',
      },
    });
    const s = last();
    for (const name of ['authorization', 'cookie', 'x-private', 'keep-alive', 'te', 'proxy-authorization', 'x-forwarded-host', 'forwarded', 'x-real-ip']) {
      expect(values(s, name), name).toEqual([]);
    }
    expect(JSON.stringify(s.rawHeaders)).not.toContain(token);
    expect(values(s, 'x-forwarded-for')).toEqual(['127.0.0.1']);
    expect(values(s, 'x-forwarded-proto')).toEqual(['http']);
    expect(values(s, 'x-end-to-end')).toEqual(['kept']);
    expect(values(s, 'host')).toEqual([`127.0.0.1:${(echo.address() as any).port}`]);
  });

  it("returns the node's status, reason, headers and body unchanged (less hop-by-hop headers)", async () => {
    const r = await rawRequest(base, path('echo', 'teapot'), { headers: auth() });
    expect(r.status).toBe(418);
    expect(r.text).toBe('teapot body');
    expect(r.headers['x-node-header']).toBe('yes');
    expect(r.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(r.headers['x-hop']).toBeUndefined();
    expect(r.headers['content-type']).toBe('text/plain');
  });

  it('streams large bodies within the limit', async () => {
    const body = 'x'.repeat(MAX_REQUEST);
    const r = await rawRequest(base, path('echo', 'upload'), { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body });
    expect(r.status).toBe(200);
    expect(last().body.length).toBe(MAX_REQUEST);
  });

  it('refuses an oversized body with 413, declared or streamed in chunks', async () => {
    const before = seen.length;
    const declared = await rawRequest(base, path('echo', 'upload'), { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'x'.repeat(MAX_REQUEST + 1) });
    expect(declared.status).toBe(413);
    expect(gatewayError(declared).code).toBe('payload_too_large');
    expect(seen.length).toBe(before); // nothing reached the node

    const chunk = 'y'.repeat(64 * 1024);
    const parts = Array.from({ length: 6 }, () => ({ data: `${(chunk.length).toString(16)}\r\n${chunk}\r\n` }));
    const streamed = await rawSocket(base, [
      { data: `POST ${path('echo', 'upload')} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n` },
      ...parts,
      { data: '0\r\n\r\n' },
    ]);
    expect(streamed.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(streamed.received).toContain('payload_too_large');
    expect(seen.slice(before).every((s) => s.body.length <= MAX_REQUEST)).toBe(true);
  });

  it("cuts a node's answer over the response limit", async () => {
    const declared = await rawRequest(base, path('echo', 'big'), { headers: auth() });
    expect(declared.status).toBe(502);
    expect(gatewayError(declared).code).toBe('node_error');
    await expect(rawRequest(base, path('echo', 'big-chunked'), { headers: auth() })).rejects.toThrow();
  });

  it('answers 502 for a node that refuses connections and 504 for one that hangs', async () => {
    const down = await rawRequest(base, path('down', 'nodeinfo'), { headers: auth() });
    expect(down.status).toBe(502);
    expect(gatewayError(down)).toMatchObject({ code: 'node_unreachable', name: 'NodeUnreachable', requestId: expect.any(String) });
    const started = Date.now();
    const hung = await rawRequest(base, path('hang', 'nodeinfo'), { headers: auth() });
    expect(hung.status).toBe(504);
    expect(gatewayError(hung).code).toBe('node_timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('cuts off a client that sends its request too slowly', async () => {
    const r = await rawSocket(base, [
      { data: `GET ${path('echo', 'nodeinfo')} HTTP/1.1\r\n` },
      { data: 'X-Slow: 1\r\n', delayMs: 1000 },
      { data: 'X-Slow: 2\r\n', delayMs: 1000 },
      { data: 'X-Slow: 3\r\n', delayMs: 1000 },
      { data: '\r\n', delayMs: 5000 },
    ]);
    expect(r.closedAfterMs).toBeLessThan(5000);
    expect(r.received === '' || /^HTTP\/1\.1 408/.test(r.received)).toBe(true);
  });

  it('reuses pooled connections to the node', async () => {
    const before = seen.length;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 5; i++) expect((await rawRequest(base, path('echo', 'nodeinfo'), { headers: auth(), agent })).status).toBe(200);
    agent.destroy();
    expect(new Set(seen.slice(before).map((s) => s.remotePort)).size).toBe(1);
  });

  it("passes the chain settings of RLN's flat unlock body (the wallet's) to the node, converted to the form it takes", async () => {
    const r = await rawRequest(base, path('echo', 'unlock'), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({
        password: SECRET,
        bitcoind_rpc_username: 'walletuser',
        bitcoind_rpc_password: 'walletpass',
        bitcoind_rpc_host: 'bitcoind.wallet.example',
        bitcoind_rpc_port: 18444,
        indexer_url: 'electrum.wallet.example:50001',
        proxy_endpoint: 'rpcs://proxy.wallet.example/json-rpc',
        announce_addresses: [],
        announce_alias: null,
      }),
    });
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(last().body)).toEqual({
      password: SECRET,
      ldk_chain_sync: {
        mode: 'BlockSync',
        config: { bitcoind_rpc_username: 'walletuser', bitcoind_rpc_password: 'walletpass', bitcoind_rpc_host: 'bitcoind.wallet.example', bitcoind_rpc_port: 18444 },
      },
      indexer_url: 'electrum.wallet.example:50001',
      announce_addresses: [],
    });
    expect(logText).not.toContain('walletpass');
  });

  it("refuses a client's bitcoind host without its own credentials: the operator's never leave for another host", async () => {
    const before = seen.length;
    const r = await rawRequest(base, path('echo', 'unlock'), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ password: SECRET, bitcoind_rpc_host: 'attacker.example', bitcoind_rpc_port: 80 }),
    });
    expect(r.status, r.text).toBe(400);
    expect(gatewayError(r)).toMatchObject({ name: 'InvalidRequest', code: 'invalid_request' });
    expect(gatewayError(r).message).toMatch(/bitcoind_rpc_username and bitcoind_rpc_password/);
    expect(seen.length).toBe(before);
  });

  it('collapses repeated slashes in the route: the invoke URL with "/nodeinfo" appended reaches /nodeinfo', async () => {
    const before = seen.length;
    const r = await rawRequest(base, `${path('echo', '')}/nodeinfo?x=1`, { headers: auth() });
    expect(r.status, r.text).toBe(200);
    expect(seen.slice(before).map((s) => s.url)).toEqual(['/nodeinfo?x=1']);
  });

  it('completes the unlock body from configuration, and never logs or echoes the password', async () => {
    const r = await rawRequest(base, path('echo', 'unlock'), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ password: SECRET, announce_alias: 'shop' }),
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(last().body)).toEqual({
      password: SECRET,
      ldk_chain_sync: { mode: 'BlockSync', config: { bitcoind_rpc_username: 'user', bitcoind_rpc_password: 'password', bitcoind_rpc_host: '127.0.0.1', bitcoind_rpc_port: 18443 } },
      indexer_url: 'tcp://127.0.0.1:50001',
      announce_addresses: [],
      announce_alias: 'shop',
    });
    expect(values(last(), 'authorization')).toEqual([]);
    // Malformed bodies are refused without quoting them.
    for (const body of [`{"password": "${SECRET}`, JSON.stringify({ password: SECRET, bitcoind_rpc_port: 'evil' }), JSON.stringify({ password: SECRET, chain: 'x' })]) {
      const bad = await rawRequest(base, path('echo', 'unlock'), { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body });
      expect(bad.status).toBe(400);
      expect(gatewayError(bad).name).toBe(body.includes('evil') || body.includes('chain') ? 'InvalidRequest' : 'InvalidJson');
      expect(bad.text).not.toContain(SECRET);
    }
    const huge = await rawRequest(base, path('echo', 'unlock'), { method: 'POST', headers: auth(), body: JSON.stringify({ password: 'x'.repeat(70_000) }) });
    expect(huge.status).toBe(413);
    expect(logText).not.toContain(SECRET);
  });

  it('logs a client that hangs up in the middle of its upload as information, not as an error', async () => {
    const before = logText.length;
    for (const route of ['unlock', 'anything']) {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(`POST ${path('echo', route)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"password": "par`);
      await new Promise((r) => setTimeout(r, 150));
      socket.destroy();
    }
    await new Promise((r) => setTimeout(r, 300));
    const lines = logText.slice(before).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
    expect(lines.map((l) => l.msg)).toContain('the client went away before its request was read');
  });
});
