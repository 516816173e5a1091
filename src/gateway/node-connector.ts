// How the gateways talk to nodes: one keep-alive connection pool for all nodes (per host and
// port), bodies streamed both ways under size limits, and a timeout on a node that goes silent.
// A node that refuses or drops the connection answers 502; one that stays silent past the
// timeout, 504. Once the node's answer has begun, a failure can only cut the client's connection.
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import type { NodeEndpoint } from '../runtime/types.ts';
import { headersToNode, responseHeadersInto, type ClientFacts } from './forward-headers.ts';
import { sendGatewayError } from './gateway-reply.ts';

export interface NodeConnectorOptions {
  timeoutMs: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
}

export interface NodeAnswer {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

// Idle pooled connections are closed before a node's own keep-alive timeout could close them
// under a request (node:http servers close after 5 s); RLN's server keeps them longer.
const FREE_SOCKET_TIMEOUT_MS = 4_000;
// Requests safe to send again when a pooled connection turned out to be closed by the node.
const RETRYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);

class NodeTimeout extends Error {}

const nodeFailure = (err: unknown, endpoint: NodeEndpoint) =>
  err instanceof NodeTimeout
    ? new AppError('node_timeout', 'the node did not answer in time')
    : new AppError('node_unreachable', `the node is not answering (${(err as NodeJS.ErrnoException).code ?? 'connection failed'})`, {
        port: endpoint.port,
      });

export class NodeConnector {
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

  constructor(private readonly opts: NodeConnectorOptions) {}

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
    const hasBody = declared !== undefined ? Number(declared) > 0 : req.headers['transfer-encoding'] !== undefined;
    const headers = headersToNode(req.rawHeaders, client);
    headers.push('Host', `${endpoint.host}:${endpoint.port}`);
    new Exchange(this.agent, this.opts, req, res, endpoint, path, headers, hasBody, requestId, onAnswer).send(!hasBody && RETRYABLE.has(req.method ?? ''));
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
    this.agent.destroy();
  }
}

/**
 * One forwarded request. A class rather than closures: the per-request state lives in one object,
 * and its steps are methods (created once), not functions allocated for every request.
 */
class Exchange {
  private upstream: http.ClientRequest | undefined;
  /** The node's answer began (or the request was refused): the upstream handlers write nothing more. */
  private answered = false;

  constructor(
    private readonly agent: http.Agent,
    private readonly opts: NodeConnectorOptions,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly endpoint: NodeEndpoint,
    private readonly path: string,
    private readonly headers: string[],
    private readonly hasBody: boolean,
    private readonly requestId: string,
    private readonly onAnswer: ((status: number) => Promise<void>) | undefined,
  ) {
    // The client went away: stop the node's work on its behalf too.
    res.once('close', () => {
      if (!res.writableFinished) this.upstream?.destroy();
    });
  }

  send(mayRetry: boolean) {
    const { endpoint, req } = this;
    const upstream = http.request({
      host: endpoint.host,
      port: endpoint.port,
      method: req.method,
      path: this.path,
      headers: this.headers,
      agent: this.agent,
      timeout: this.opts.timeoutMs,
    });
    this.upstream = upstream;
    this.answered = false;
    upstream.on('timeout', () => upstream.destroy(new NodeTimeout()));
    upstream.on('error', (err) => this.failed(upstream, err, mayRetry));
    upstream.on('response', (answer: IncomingMessage) => this.answer(upstream, answer));
    if (!this.hasBody) {
      upstream.end();
      return;
    }
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > this.opts.maxRequestBytes) {
        req.removeAllListeners('data');
        upstream.destroy();
        this.answered = true; // nothing more may be written by the upstream handlers
        sendGatewayError(this.res, this.requestId, tooLarge(this.opts.maxRequestBytes), { connection: 'close' });
        return;
      }
      if (!upstream.write(chunk)) {
        req.pause();
        upstream.once('drain', () => req.resume());
      }
    });
    req.on('end', () => upstream.end());
    req.on('error', () => upstream.destroy());
  }

  private failed(upstream: http.ClientRequest, err: Error, mayRetry: boolean) {
    if (upstream !== this.upstream) return;
    if (this.answered) {
      this.res.destroy();
      return;
    }
    if (mayRetry && upstream.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET') return this.send(false);
    sendGatewayError(this.res, this.requestId, nodeFailure(err, this.endpoint));
  }

  private answer(upstream: http.ClientRequest, answer: IncomingMessage) {
    this.answered = true;
    const { res, opts } = this;
    const headers: string[] = [];
    const length = responseHeadersInto(answer.rawHeaders, headers);
    if (length > opts.maxResponseBytes) {
      answer.destroy();
      upstream.destroy();
      sendGatewayError(res, this.requestId, new AppError('node_error', `the node's answer is larger than ${opts.maxResponseBytes} bytes`));
      return;
    }
    if (!this.onAnswer) return this.relay(answer, headers, length);
    this.onAnswer(answer.statusCode ?? 0).then(
      () => this.relay(answer, headers, length),
      (err) => {
        answer.destroy();
        sendGatewayError(res, this.requestId, err);
      },
    );
  }

  private relay(answer: IncomingMessage, headers: string[], length: number) {
    const { res } = this;
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
    // With a Content-Length (checked above) the parser delivers no more than that; without one
    // (chunked, or until close) the bytes are counted as they pass.
    if (!(length >= 0)) {
      const max = this.opts.maxResponseBytes;
      let sent = 0;
      answer.on('data', (chunk: Buffer) => {
        sent += chunk.length;
        if (sent > max) {
          answer.destroy();
          res.destroy();
        }
      });
    }
    answer.on('error', () => res.destroy());
    answer.on('aborted', () => res.destroy());
    answer.pipe(res);
  }
}

const tooLarge = (limit: number) => new AppError('payload_too_large', `the request body is larger than ${limit} bytes (GATEWAY_MAX_REQUEST_BYTES)`);
