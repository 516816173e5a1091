// A lean closed-loop HTTP/1.1 load generator for bench/gateway.ts: each connection is a raw socket
// (net, or tls with the client certificate) that writes one fixed request and reads the answer
// (framed by Content-Length or chunked, checked to be a 200) before writing the next. No
// http.Agent, ClientRequest or IncomingMessage: on the 2 shared cores of the bench machine the
// node:http client cost about as much CPU per request as the proxies it measured (~40 µs, ~70 µs
// over TLS; this one ~16 and ~23), so it rather than the proxy set much of the ceiling. Every
// target is measured with this same client; bench/gateway-load.ts keeps the agent-based one
// (BENCH_GATEWAY_LOADGEN=agent).
//
// Connections are opened (and TLS handshakes done) by `open`, before a measured run, and kept
// across runs while the server keeps them: the runs measure kept-alive requests; new handshakes
// are measured on their own. A connection closed while idle is opened again by the next `open`.
import net from 'node:net';
import tls from 'node:tls';
import type { LoadResult } from './load.ts';
import type { LoadTarget } from './gateway-load.ts';

/** Which client bench/gateway-load.ts measures requests with. */
export const LOAD_GENERATOR: 'raw' | 'agent' = process.env.BENCH_GATEWAY_LOADGEN === 'agent' ? 'agent' : 'raw';

// The servers measured close idle connections at 5 s (node:http's keep-alive timeout); closing
// ours first means no request is ever written on a connection the server is closing.
const IDLE_MS = 4_000;
const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

class RawConnection {
  private socket: net.Socket | undefined;
  private ready: Promise<void> | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current answer's framing (its Content-Length, or chunked), undefined until its head is read. */
  private framing: number | 'chunked' | undefined;
  /** Where its body starts in the pending bytes. */
  private bodyAt = 0;
  private onAnswer: ((err?: Error) => void) | undefined;

  constructor(
    private readonly target: LoadTarget,
    private readonly url: URL,
    private readonly request: Buffer,
  ) {}

  open(): Promise<void> {
    if (this.socket && !this.socket.destroyed) return this.ready!;
    const { hostname: host, port } = this.url;
    const socket = this.target.tls
      ? tls.connect({ host, port: Number(port), servername: 'localhost', ...this.target.tls })
      : net.connect({ host, port: Number(port) });
    socket.setNoDelay(true);
    this.socket = socket;
    this.ready = new Promise<void>((resolve, reject) => {
      socket.once(this.target.tls ? 'secureConnect' : 'connect', resolve);
      socket.once('error', reject);
    });
    socket.on('data', (chunk: Buffer) => this.data(chunk));
    socket.on('error', () => {});
    socket.on('close', () => this.answered(new Error(`${this.target.name}: the server closed the connection`)));
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    return this.ready;
  }

  /** One request on the open connection; resolves when its whole answer arrived. */
  send(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.onAnswer = (err) => (err ? reject(err) : resolve());
      this.socket!.write(this.request);
    });
  }

  close() {
    this.socket?.destroy();
  }

  private answered(err?: Error) {
    const done = this.onAnswer;
    this.onAnswer = undefined;
    done?.(err);
  }

  private data(chunk: Buffer) {
    if (!this.onAnswer) return this.socket!.destroy();
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // Nearly always the whole answer is one read: concatenating is the rare case.
    const all = this.pending.length === 1 ? chunk : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [all];
    let left: number | Error;
    if (this.framing === undefined) {
      const end = all.indexOf(HEAD_END);
      if (end === -1) return;
      const head = all.toString('latin1', 0, end);
      const status = head.slice(9, 12);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
      this.bodyAt = end + HEAD_END.length;
      this.framing = length !== undefined ? Number(length) : /\r\ntransfer-encoding: *chunked/i.test(head) ? 'chunked' : undefined;
      if (status !== '200' || this.framing === undefined) {
        return this.fail(`GET ${this.url.pathname} answered ${status}${this.framing === undefined ? ' without Content-Length or chunked framing' : ''}`);
      }
    }
    left = this.framing === 'chunked' ? chunkedLeft(all, this.bodyAt) : this.framing - (all.length - this.bodyAt);
    if (left instanceof Error) return this.fail(left.message);
    if (left > 0) return;
    if (left < 0) return this.fail('more bytes than the answer framed');
    this.pending = [];
    this.pendingBytes = 0;
    this.framing = undefined;
    this.answered();
  }

  private fail(message: string) {
    this.socket!.destroy();
    this.answered(new Error(`${this.target.name}: ${message}`));
  }
}

/**
 * A chunked body from `at`: 0 once the last chunk and the blank line after it are all there, > 0
 * while bytes are missing, < 0 for bytes past its end. The bench's answers carry no trailers.
 */
function chunkedLeft(buf: Buffer, at: number): number | Error {
  for (;;) {
    const lineEnd = buf.indexOf(CRLF, at);
    if (lineEnd === -1) return 1;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) return new Error('a malformed chunk size');
    const next = lineEnd + 2 + size + 2;
    if (size === 0) return next - buf.length;
    if (next > buf.length) return next - buf.length;
    at = next;
  }
}

// One set of connections per target and connection count, kept across runs.
const pools = new Map<string, RawConnection[]>();

function poolOf(target: LoadTarget, connections: number): RawConnection[] {
  const key = `${target.name}/${connections}`;
  let pool = pools.get(key);
  if (!pool) {
    const url = new URL(target.url);
    const headers = Object.entries({ host: url.host, ...target.headers }).map(([k, v]) => `${k}: ${v}\r\n`);
    const request = Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1\r\n${headers.join('')}\r\n`, 'latin1');
    pool = Array.from({ length: connections }, () => new RawConnection(target, url, request));
    pools.set(key, pool);
  }
  return pool;
}

/** Opens whichever of the target's connections are not open (new TCP connections, handshakes). */
export async function openRaw(target: LoadTarget, connections: number): Promise<void> {
  await Promise.all(poolOf(target, connections).map((c) => c.open()));
}

export async function runRaw(target: LoadTarget, connections: number, durationMs: number): Promise<LoadResult> {
  const pool = poolOf(target, connections);
  await Promise.all(pool.map((c) => c.open()));
  const latencies: number[] = [];
  const started = performance.now();
  const end = started + durationMs;
  await Promise.all(
    pool.map(async (c) => {
      for (let t0 = performance.now(); t0 < end; ) {
        await c.send();
        const t1 = performance.now();
        latencies.push(t1 - t0);
        t0 = t1;
      }
    }),
  ).catch((err) => {
    for (const c of pool) c.close();
    throw err;
  });
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { requests: latencies.length, perSecond: (latencies.length / elapsed) * 1000, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}
