// The forwarding path (RlnClient.forward) against a raw TCP server standing in for a node that
// misbehaves: answers framed ambiguously, bytes after an answer, kept-alive connections it closes
// while idle, and more concurrent requests than the pool may open connections. No database: a
// bare node:http server calls the RLN client as the gateways do once a request is allowed.
import { gatewayError } from '../helpers/gateway-error.ts';
import http from 'node:http';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RlnClient } from '../../src/rln/client.ts';
import { sendGatewayError } from '../../src/gateway/gateway-reply.ts';
import { freePort } from '../helpers/ports.ts';
import { rawRequest, rawSocket } from './gateway-client.ts';

const LIMIT = 2 * 1024 * 1024;

/** What the gateways do once a request is allowed: forward it, failures answered in their shape. */
const forward = (rln: RlnClient, req: http.IncomingMessage, res: http.ServerResponse, port: number) =>
  rln.forward({ req, res, endpoint: { host: '127.0.0.1', port }, path: req.url!, client: { address: '127.0.0.1', proto: 'http' }, fail: (err, headers) => sendGatewayError(res, 'test-request', err, headers) });

/** What the fake node answers to a request line, and what it saw. */
type Script = (requestLine: string, socket: net.Socket) => void;

describe('forwarding to a node that misbehaves', () => {
  let node: net.Server;
  let gateway: http.Server;
  let connector: RlnClient;
  let base: string;
  let script: Script = () => {};
  let connections = 0;
  let open = 0;
  let mostOpen = 0;

  beforeAll(async () => {
    node = net.createServer((socket) => {
      connections++;
      mostOpen = Math.max(mostOpen, ++open);
      socket.on('close', () => open--);
      let buffered = '';
      socket.on('data', (d) => {
        buffered += d.toString('latin1');
        let end: number;
        while ((end = buffered.indexOf('\r\n\r\n')) !== -1) {
          const line = buffered.slice(0, buffered.indexOf('\r\n'));
          buffered = buffered.slice(end + 4);
          script(line, socket);
        }
      });
      socket.on('error', () => {});
    });
    const nodePort = await freePort();
    await new Promise<void>((r) => node.listen(nodePort, '127.0.0.1', r));
    connector = new RlnClient({ timeoutMs: 2000, maxRequestBytes: 1024, maxResponseBytes: LIMIT, maxConnectionsPerNode: 2 });
    gateway = http.createServer((req, res) => forward(connector, req, res, nodePort));
    const port = await freePort();
    await new Promise<void>((r) => gateway.listen(port, '127.0.0.1', r));
    base = `http://127.0.0.1:${port}`;
  });

  afterEach(() => {
    script = () => {};
  });

  afterAll(async () => {
    await connector.close();
    gateway.closeAllConnections();
    await new Promise((r) => gateway.close(r));
    await new Promise((r) => node.close(r));
  });

  const ok = (socket: net.Socket, body = 'ok') => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);

  it('answers 502 to an answer with both Content-Length and Transfer-Encoding, and drops that connection', async () => {
    script = (line, socket) => {
      if (line.startsWith('GET /smuggle ')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
      else ok(socket);
    };
    const before = connections;
    const r = await rawRequest(base, '/smuggle');
    expect(r.status).toBe(502);
    expect(gatewayError(r).code).toBe('node_error');
    expect((await rawRequest(base, '/next')).text).toBe('ok');
    expect(connections - before).toBe(2); // the next request needed a new connection
  });

  it('relays a complete answer but never reads the bytes after it as the next answer', async () => {
    script = (line, socket) => {
      if (line.startsWith('GET /split ')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirstHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nforged');
      else ok(socket, 'honest');
    };
    expect((await rawRequest(base, '/split')).text).toBe('first');
    for (let i = 0; i < 3; i++) expect((await rawRequest(base, '/after')).text).toBe('honest');
  });

  it('sends a GET again on a new connection when the node closes the kept-alive one under it, never a POST', async () => {
    // The node answers the first request on each connection and drops the connection at the second,
    // as a node whose keep-alive timeout ends just as the request arrives.
    const served = new WeakMap<net.Socket, number>();
    script = (_line, socket) => {
      const n = (served.get(socket) ?? 0) + 1;
      served.set(socket, n);
      if (n === 1) ok(socket, 'answered');
      else socket.destroy();
    };
    expect((await rawRequest(base, '/warm')).text).toBe('answered');
    expect((await rawRequest(base, '/again')).text).toBe('answered');
    const post = await rawRequest(base, '/post', { method: 'POST', body: 'x' });
    expect(post.status).toBe(502);
    expect(gatewayError(post).code).toBe('node_unreachable');
  });

  it('answers 502 when the node closes the connection in the middle of its answer', async () => {
    script = (line, socket) => {
      if (line.startsWith('GET /cut ')) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort');
      else ok(socket);
    };
    await expect(rawRequest(base, '/cut')).rejects.toThrow();
    expect((await rawRequest(base, '/after-cut')).text).toBe('ok');
  });

  it('relays an answer delimited by the close of the connection, and cuts one the node resets', async () => {
    script = (line, socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart one, ');
      setTimeout(() => {
        if (line.startsWith('GET /whole ')) socket.end('part two');
        else socket.resetAndDestroy();
      }, 20);
    };
    expect((await rawRequest(base, '/whole')).text).toBe('part one, part two');
    await expect(rawRequest(base, '/reset')).rejects.toThrow();
  });

  it('opens no more connections to a node than allowed: further requests wait for one', async () => {
    script = (_line, socket) => setTimeout(() => ok(socket, 'slow'), 50);
    mostOpen = open;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => rawRequest(base, `/slow/${i}`)));
    expect(answers.map((a) => a.text)).toEqual(Array(6).fill('slow'));
    expect(mostOpen).toBeLessThanOrEqual(2);
  });

  it('relays a large answer to a client that reads slowly, whole and in order', async () => {
    const body = Buffer.alloc(LIMIT - 10);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 251;
    script = (_line, socket) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
      for (let at = 0; at < body.length; at += 100_000) socket.write(body.subarray(at, at + 100_000));
    };
    const received = await new Promise<Buffer>((resolve, reject) => {
      http.get(`${base}/large`, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.pause(); // a client that does not read for a while
        setTimeout(() => res.resume(), 200);
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      }).on('error', reject);
    });
    expect(received.equals(body)).toBe(true);
  });

  it('cuts a chunked answer over the response limit', async () => {
    script = (_line, socket) => {
      socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
      for (let i = 0; i < 5; i++) socket.write(`80000\r\n${'x'.repeat(0x80000)}\r\n`);
      socket.write('0\r\n\r\n');
    };
    await expect(rawRequest(base, '/big')).rejects.toThrow();
  });
});

describe('forwarding request bodies', () => {
  let node: http.Server;
  let gateway: http.Server;
  let connector: RlnClient;
  let base: string;

  beforeAll(async () => {
    // Answers what it received: its framing headers and the body.
    node = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => res.end(JSON.stringify({ te: req.headers['transfer-encoding'] ?? null, length: req.headers['content-length'] ?? null, body: Buffer.concat(chunks).toString() })));
    });
    const nodePort = await freePort();
    await new Promise<void>((r) => node.listen(nodePort, '127.0.0.1', r));
    connector = new RlnClient({ timeoutMs: 2000, maxRequestBytes: 64 * 1024, maxResponseBytes: 64 * 1024 });
    gateway = http.createServer((req, res) => forward(connector, req, res, nodePort));
    const port = await freePort();
    await new Promise<void>((r) => gateway.listen(port, '127.0.0.1', r));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await connector.close();
    for (const s of [gateway, node]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('passes a chunked upload on chunked, whole', async () => {
    const r = await rawSocket(base, [
      { data: 'POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' },
      { data: '5\r\nhello\r\n' },
      { data: '6\r\n world\r\n0\r\n\r\n', delayMs: 20 },
    ]);
    expect(r.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(r.received.slice(r.received.indexOf('{'), r.received.lastIndexOf('}') + 1))).toEqual({ te: 'chunked', length: null, body: 'hello world' });
  });

  it('passes a declared length on as declared, and says Content-Length: 0 for a POST without a body', async () => {
    expect((await rawRequest(base, '/a', { method: 'PUT', body: 'abc' })).json).toEqual({ te: null, length: '3', body: 'abc' });
    const empty = await rawSocket(base, [{ data: 'POST /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' }]);
    expect(empty.received).toContain('{"te":null,"length":"0","body":""}');
  });
});
