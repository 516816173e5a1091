// The one client of the RLN daemons, built once by the composition root and used by everything that
// talks to a node: the gateways (forwarding a client's request, the unlock they complete), the
// builds (is the daemon up?), automatic unlock, backups and restores, and the health probe. Its
// own calls go through one undici Agent, connections kept alive per node; the gateways' forwarding
// goes through forwarding/'s pool (forward.ts says why). Each holds at most
// `maxConnectionsPerNode` connections to one node (further requests wait for one), idle ones
// closed after IDLE_MS.
import { Agent } from 'undici';
import { isSuccess, nodeRefusal, type RlnAnswer } from './answer.ts';
import { answerTooLarge, nodeFailure, type RlnEndpoint } from './failures.ts';
import { forwardToNode, type ForwardedRequest } from './forward.ts';
import { NodeConnectionPool } from './forwarding/connection-pool.ts';
import { parseVssBackupInfo, type VssBackupInfo } from './vss-backup-info.ts';

export type { RlnEndpoint };

export interface RlnClientOptions {
  /** How long a node may stay silent before a call is given up (504 node_timeout). */
  timeoutMs: number;
  /** Largest request body forwarded to a node, and largest answer body taken from one. */
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** Connections to one node at most (MAX_PER_NODE unless set; tests set fewer). */
  maxConnectionsPerNode?: number;
}

export interface CallOptions {
  /** A JSON body (sent with Content-Type: application/json), as a value or as its text. */
  json?: unknown;
  jsonText?: Buffer | string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

// Idle connections are closed before a node's own keep-alive timeout could close them under a
// request (node:http servers close after 5 s); RLN's server keeps them longer.
const IDLE_MS = 4_000;
// As many idle as in use: a smaller idle pool closes connections after every burst and opens new
// ones for the next (measured on the forwarding pool: at 50 concurrent requests, 32 idle cost ~2x
// the CPU per request).
const MAX_PER_NODE = 128;

const originOf = (endpoint: RlnEndpoint) => (endpoint.host.includes(':') ? `http://[${endpoint.host}]:${endpoint.port}` : `http://${endpoint.host}:${endpoint.port}`);

export class RlnClient {
  private readonly agent: Agent;
  private readonly forwarding: NodeConnectionPool;

  constructor(private readonly opts: RlnClientOptions) {
    this.agent = new Agent({
      connections: opts.maxConnectionsPerNode ?? MAX_PER_NODE,
      keepAliveTimeout: IDLE_MS,
      keepAliveMaxTimeout: IDLE_MS,
      connect: { timeout: opts.timeoutMs },
    });
    this.forwarding = new NodeConnectionPool(opts.maxConnectionsPerNode ?? MAX_PER_NODE);
  }

  /**
   * Streams a client's request to the node and the node's answer back, status, headers and body
   * unchanged (less hop-by-hop headers). Never throws: a failure is answered with `r.fail` or cuts
   * the client's connection once the node's answer has begun.
   */
  forward(r: ForwardedRequest): void {
    forwardToNode(this.forwarding, this.opts, r);
  }

  /** One buffered exchange with a node. Rejects with an AppError when the node cannot be asked. */
  async call(endpoint: RlnEndpoint, method: 'GET' | 'POST', path: string, options: CallOptions = {}): Promise<RlnAnswer> {
    const timeout = options.timeoutMs ?? this.opts.timeoutMs;
    const body = options.jsonText ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
    try {
      const answer = await this.agent.request({
        origin: originOf(endpoint),
        path,
        method,
        headers: withAuthorization(endpoint, body === undefined ? options.headers : { 'content-type': 'application/json', ...options.headers }),
        body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        // Bounds the connect too: a node whose address drops packets must not hold a probe.
        signal: AbortSignal.timeout(timeout),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > this.opts.maxResponseBytes) {
          answer.body.destroy();
          throw answerTooLarge(this.opts.maxResponseBytes);
        }
        chunks.push(chunk);
      }
      return { status: answer.statusCode, rawHeaders: rawList(answer.headers), body: Buffer.concat(chunks) };
    } catch (err) {
      throw nodeFailure(err, endpoint);
    }
  }

  // RLN's routes the service calls itself (docs/RLN.md). Each answers the node's own answer; the
  // ones whose refusal is an error of the caller's throw it as one (answer.ts).

  unlock(endpoint: RlnEndpoint, body: Record<string, unknown>, headers?: Record<string, string>) {
    return this.call(endpoint, 'POST', '/unlock', { json: body, headers });
  }

  init(endpoint: RlnEndpoint, body: { password: string; mnemonic?: string }) {
    return this.call(endpoint, 'POST', '/init', { json: body });
  }

  nodeInfo(endpoint: RlnEndpoint, timeoutMs?: number) {
    return this.call(endpoint, 'GET', '/nodeinfo', { timeoutMs });
  }

  networkInfo(endpoint: RlnEndpoint, timeoutMs?: number) {
    return this.call(endpoint, 'GET', '/networkinfo', { timeoutMs });
  }

  /** /lock; a node locked already (by its owner a moment ago) is what was asked for. */
  async lock(endpoint: RlnEndpoint): Promise<void> {
    const answer = await this.call(endpoint, 'POST', '/lock', { json: {} });
    if (isSuccess(answer.status)) return;
    const refusal = nodeRefusal(answer, 'lock');
    if (refusal.details?.nodeError !== 'LockedNode') throw refusal;
  }

  async backup(endpoint: RlnEndpoint, backupPath: string, password: string, timeoutMs?: number): Promise<void> {
    const answer = await this.call(endpoint, 'POST', '/backup', { json: { backup_path: backupPath, password }, timeoutMs });
    if (!isSuccess(answer.status)) throw nodeRefusal(answer, 'back up');
  }

  async restore(endpoint: RlnEndpoint, backupPath: string, password: string, timeoutMs?: number): Promise<void> {
    const answer = await this.call(endpoint, 'POST', '/restore', { json: { backup_path: backupPath, password }, timeoutMs });
    if (!isSuccess(answer.status)) throw nodeRefusal(answer, 'restore');
  }

  /** RLN's fork's /vssbackupinfo (an unlocked node with continuous state); a refusal throws. */
  async vssBackupInfo(endpoint: RlnEndpoint, timeoutMs?: number): Promise<VssBackupInfo> {
    return parseVssBackupInfo(await this.call(endpoint, 'GET', '/vssbackupinfo', { timeoutMs }));
  }

  /** Whether the daemon answers HTTP at all (a fresh RLN answers 403 "Node is locked": it is up). */
  async answers(endpoint: RlnEndpoint, timeoutMs: number): Promise<boolean> {
    try {
      await this.nodeInfo(endpoint, timeoutMs);
      return true;
    } catch {
      return false;
    }
  }

  /** Closes every connection; calls in flight fail. */
  async close(): Promise<void> {
    this.forwarding.close();
    await this.agent.destroy();
  }
}

function rawList(headers: Record<string, string | string[] | undefined>): string[] {
  const out: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string') out.push(name, value);
    else if (value) for (const v of value) out.push(name, v);
  }
  return out;
}

function withAuthorization(endpoint: RlnEndpoint, headers: Record<string, string> | undefined): Record<string, string> | undefined {
  return endpoint.authorization === undefined ? headers : { ...headers, authorization: endpoint.authorization };
}
