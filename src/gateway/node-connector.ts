// How the gateways talk to nodes. Forwarded requests (every call a client makes through a gateway)
// go over raw kept-alive connections, one pool for all nodes (per host and port), their heads
// written as one string and the node's answers read by a strict parser (node-exchange.ts): a
// node:http ClientRequest, IncomingMessage and pipe per request cost about as much CPU as all the
// rest of a gateway request together. The few calls the gateway makes itself (unlock, init,
// health probes, backups) use node:http, buffered. Bodies are streamed both ways under size limits,
// and a node that goes silent past the timeout is given up.
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import type { NodeEndpoint } from '../runtime/types.ts';
import { requestHeadToNode, type ClientFacts } from './forward-headers.ts';
import { sendGatewayError } from './gateway-reply.ts';
import { NodeConnectionPool } from './node-connection-pool.ts';
import { NodeExchange, tooLarge } from './node-exchange.ts';

export interface NodeConnectorOptions {
  timeoutMs: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** Forwarding connections to one node at most, further requests wait (128 unless set; tests set fewer). */
  maxConnectionsPerNode?: number;
}

export interface NodeAnswer {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

// Idle pooled connections of the buffered calls are closed before a node's own keep-alive timeout
// could close them under a request (node:http servers close after 5 s).
const FREE_SOCKET_TIMEOUT_MS = 4_000;
// Requests safe to send again when a pooled connection turned out to be closed by the node.
const RETRYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);
// Methods that carry no body unless they say so; any other sent without one says Content-Length: 0
// (as node:http's client does), so the node never waits for a body.
const BODYLESS_BY_DEFAULT = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);
// What a request target may hold on the wire (node:http's client refuses the same).
const UNSAFE_TARGET = /[^\x21-\x7e\x80-\xff]/;

class NodeTimeout extends Error {}

const nodeFailure = (err: unknown, endpoint: NodeEndpoint) =>
  err instanceof NodeTimeout
    ? new AppError('node_timeout', 'the node did not answer in time')
    : new AppError('node_unreachable', `the node is not answering (${(err as NodeJS.ErrnoException).code ?? 'connection failed'})`, {
        port: endpoint.port,
      });

export class NodeConnector {
  private readonly pool: NodeConnectionPool;
  private readonly agent = new http.Agent({
    keepAlive: true,
    maxSockets: 128,
    // As many idle as in use: a smaller idle pool closes connections after every burst and opens
    // new ones for the next (measured: at 50 concurrent requests, 32 idle cost ~2x the CPU per
    // request). Idle connections still close after FREE_SOCKET_TIMEOUT_MS.
    maxFreeSockets: 128,
    scheduling: 'lifo',
    timeout: FREE_SOCKET_TIMEOUT_MS,
  });

  constructor(private readonly opts: NodeConnectorOptions) {
    this.pool = new NodeConnectionPool(opts.maxConnectionsPerNode);
  }

  /**
   * Streams `req` to the node at `path` and the node's answer back to `res`, status, headers and
   * body unchanged. `onAnswer` runs once the node's status is known and before the client sees it
   * (the gateway records a successful /init there). Never throws: every failure is answered on
   * `res` (or cuts it once the node's answer has begun).
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: NodeEndpoint,
    path: string,
    client: ClientFacts,
    requestId: string,
    onAnswer?: (status: number) => Promise<void>,
  ): void {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > this.opts.maxRequestBytes) {
      // The body is never read: close the connection after answering rather than drain it.
      sendGatewayError(res, requestId, tooLarge(this.opts.maxRequestBytes), { connection: 'close' });
      return;
    }
    if (UNSAFE_TARGET.test(path)) {
      sendGatewayError(res, requestId, new AppError('invalid_path', 'the request target holds characters that cannot be forwarded'));
      return;
    }
    const method = req.method ?? 'GET';
    // node:http has already refused a request with both Content-Length and Transfer-Encoding.
    const body = declared !== undefined ? (Number(declared) > 0 ? 'fixed' : 'none') : req.headers['transfer-encoding'] !== undefined ? 'chunked' : 'none';
    const framing = body === 'chunked' ? 'Transfer-Encoding: chunked\r\n' : declared === undefined && !BODYLESS_BY_DEFAULT.has(method) ? 'Content-Length: 0\r\n' : '';
    const head = requestHeadToNode(method, path, req.rawHeaders, client, `${endpoint.host}:${endpoint.port}`, framing);
    new NodeExchange(this.pool, this.opts, req, res, endpoint, head, body, requestId, body === 'none' && RETRYABLE.has(method), onAnswer).start();
  }

  /** One buffered exchange with a node (the unlock the gateway composes itself). */
  call(endpoint: NodeEndpoint, method: string, path: string, body: Buffer, extraHeaders: Record<string, string>, timeoutMs = this.opts.timeoutMs): Promise<NodeAnswer> {
    return new Promise<NodeAnswer>((resolve, reject) => {
      const upstream = http.request({
        host: endpoint.host,
        port: endpoint.port,
        method,
        path,
        agent: this.agent,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...extraHeaders },
      });
      upstream.setTimeout(timeoutMs, () => upstream.destroy(new NodeTimeout()));
      upstream.on('error', (err) => reject(nodeFailure(err, endpoint)));
      upstream.on('response', (answer) => {
        const chunks: Buffer[] = [];
        let size = 0;
        answer.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.opts.maxResponseBytes) upstream.destroy(new Error('response too large'));
          else chunks.push(chunk);
        });
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, rawHeaders: answer.rawHeaders, body: Buffer.concat(chunks) }));
        answer.on('error', (err) => reject(nodeFailure(err, endpoint)));
      });
      upstream.end(body);
    });
  }

  close() {
    this.pool.close();
    this.agent.destroy();
  }
}
