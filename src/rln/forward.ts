// A client's request forwarded to its node and the node's answer relayed back, both streamed, under
// size limits both ways; a node that goes silent past the timeout is given up.
//
// The one part of the RLN client that does not go through undici (client.ts): measured side by
// side in one run (`npm run bench -- gateway`, docs/BENCHMARKS.md "One RLN client"), forwarding
// through undici's dispatch cost the bearer gateway ~20% of its throughput against the
// hand-written path of forwarding/ (0.72-0.80 in three runs; the issue allowed 10%): undici writes
// each request on a reused connection only after a turn of the event loop (its defence against
// bytes a node sends unasked, GHSA-35p6-xmwp-9g52), reads through stream events, and parses every
// answer's headers into an object. forwarding/ keeps the parser strict (docs/ARCHITECTURE.md, the
// second pass, point 2) and the hostile-node tests cover it (test/gateway/node-answers.test.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors.ts';
import { requestTooLarge, type RlnEndpoint } from './failures.ts';
import type { ClientFacts } from './forward-headers.ts';
import type { NodeConnectionPool } from './forwarding/connection-pool.ts';
import { NodeExchange } from './forwarding/exchange.ts';
import { requestHead } from './forwarding/request-head.ts';

export interface ForwardLimits {
  timeoutMs: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
}

export interface ForwardedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  endpoint: RlnEndpoint;
  /** The path and query on the node. */
  path: string;
  client: ClientFacts;
  /** Answers a failure before the node's answer began, in the caller's error shape. */
  fail: (err: AppError, headers?: Record<string, string>) => void;
  /** Runs once the node's status is known and before the client sees it (a recorded /init). */
  onAnswer?: (status: number) => Promise<void>;
}

// Requests safe to send again when a pooled connection turned out to be closed by the node.
const RETRYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);
// Methods that carry no body unless they say so; any other sent without one says Content-Length: 0
// (as node:http's client does), so the node never waits for a body.
const BODYLESS_BY_DEFAULT = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);
// What a request target may hold on the wire (node:http's client refuses the same).
const UNSAFE_TARGET = /[^\x21-\x7e\x80-\xff]/;

/** Streams `r.req` to the node and its answer to `r.res`. Never throws: every failure is answered or cuts. */
export function forwardToNode(pool: NodeConnectionPool, limits: ForwardLimits, r: ForwardedRequest): void {
  const { req } = r;
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limits.maxRequestBytes) {
    // The body is never read: close the connection after answering rather than drain it.
    r.fail(requestTooLarge(limits.maxRequestBytes), { connection: 'close' });
    return;
  }
  if (UNSAFE_TARGET.test(r.path)) {
    r.fail(new AppError('invalid_path', 'the request target holds characters that cannot be forwarded'));
    return;
  }
  const method = req.method ?? 'GET';
  // node:http has already refused a request with both Content-Length and Transfer-Encoding.
  const body = declared !== undefined ? (Number(declared) > 0 ? 'fixed' : 'none') : req.headers['transfer-encoding'] !== undefined ? 'chunked' : 'none';
  const framing = body === 'chunked' ? 'chunked' : declared === undefined && !BODYLESS_BY_DEFAULT.has(method) ? 'empty' : 'as-declared';
  const head = requestHead(method, r.path, req.rawHeaders, r.client, `${r.endpoint.host}:${r.endpoint.port}`, framing, r.endpoint.authorization);
  new NodeExchange(pool, limits, req, r.res, r.endpoint, head, body, r.fail, body === 'none' && RETRYABLE.has(method), r.onAnswer).start();
}
