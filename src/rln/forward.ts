// A client's request forwarded to its node and the node's answer relayed back, both streamed, over
// the RLN client's undici Agent (client.ts): one connection pool for every call to every daemon.
// undici parses and frames HTTP (llhttp); this file only decides what crosses and what a failure
// means. Under size limits both ways; a node that goes silent past the timeout is given up.
//
// Failures: a node that refuses or drops the connection before answering is 502, one that stays
// silent past the timeout 504, a malformed or oversized answer 502; once the answer has begun, a
// failure can only cut the client's connection, so a client never takes part of an answer for all
// of it. A bodiless GET, HEAD or OPTIONS the node drops before answering (a kept-alive connection
// it closed as the request went out) is sent once more.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import type { Dispatcher } from 'undici';
import { AppError } from '../errors.ts';
import { closeAfterUnreadBody } from '../http/unread-body.ts';
import { answerTooLarge, nodeFailure, requestTooLarge, type RlnEndpoint } from './failures.ts';
import { headersToNode, responseHeadersFrom, type ClientFacts } from './forward-headers.ts';

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

// Requests safe to send again when the node dropped the connection before answering.
const RETRYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);
const DROPPED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
// What a request target may hold on the wire (undici and node:http refuse the same).
const UNSAFE_TARGET = /[^\x21-\x7e\x80-\xff]/;

export const originOf = (endpoint: RlnEndpoint) => (endpoint.host.includes(':') ? `http://[${endpoint.host}]:${endpoint.port}` : `http://${endpoint.host}:${endpoint.port}`);

// undici ends an answer delimited by the connection's close when that connection is reset, as if
// it had closed cleanly (macOS resets where it means a close). A proxy must not: the client would
// take a cut answer for a whole one. The node connections' sockets say when a reset is being
// handled: undici ends the answer within that same synchronous 'error' emit. The one hand-written
// part of the path, here because no option of undici's says it.
let resetting = false;
export function watchResets(socket: Socket) {
  socket.prependListener('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET') return;
    resetting = true;
    process.nextTick(() => (resetting = false));
  });
}

/** Streams `r.req` to the node and its answer to `r.res`. Never throws: every failure is answered or cuts. */
export function forwardToNode(dispatcher: Dispatcher, limits: ForwardLimits, r: ForwardedRequest): void {
  const declared = r.req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limits.maxRequestBytes) {
    // The body is never read: the connection closes after answering rather than drain it.
    r.fail(requestTooLarge(limits.maxRequestBytes), { connection: 'close' });
    return;
  }
  if (UNSAFE_TARGET.test(r.path)) {
    r.fail(new AppError('invalid_path', 'the request target holds characters that cannot be forwarded'));
    return;
  }
  // node:http has already refused a request with both Content-Length and Transfer-Encoding.
  const hasBody = declared !== undefined ? Number(declared) > 0 : r.req.headers['transfer-encoding'] !== undefined;
  new Forwarding(dispatcher, limits, r, hasBody).start();
}

/** The request body on its way to the node, counted: past the limit it fails the exchange. */
class LimitedBody extends Transform {
  private received = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.received += chunk.length;
    done(this.received > this.limit ? requestTooLarge(this.limit) : null, chunk);
  }
}

class Forwarding implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private mayRetry: boolean;
  /** The node's head arrived: a failure now is told only while nothing went to the client. */
  private answered = false;
  /** Nothing more to do: the answer was relayed, or the exchange failed or was abandoned. */
  private finished = false;
  private closeDelimited = false;
  /** Bytes of an answer whose length was not declared (a declared one was checked at its head). */
  private relayed = -1;
  /** The declared length of the answer's body, -1 without one. */
  private length = -1;
  /** While `onAnswer` runs, the node's body waits here (with `heldEnd` once it is complete). */
  private held: Buffer[] | undefined;
  private heldEnd = false;

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly limits: ForwardLimits,
    private readonly r: ForwardedRequest,
    private readonly hasBody: boolean,
  ) {
    this.mayRetry = !hasBody && RETRYABLE.has(r.req.method ?? 'GET');
    // The client went away: stop the node's work on its behalf too.
    r.res.once('close', () => this.clientClosed());
  }

  start() {
    const { req, client, endpoint, path } = this.r;
    this.dispatcher.dispatch(
      {
        origin: originOf(endpoint),
        path,
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: headersToNode(req.rawHeaders, client),
        body: this.hasBody ? req.pipe(new LimitedBody(this.limits.maxRequestBytes)) : null,
        headersTimeout: this.limits.timeoutMs,
        bodyTimeout: this.limits.timeoutMs,
      },
      this,
    );
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller;
    if (this.finished) controller.abort(new Error('the client went away'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>, message?: string) {
    if (this.finished || status < 200) return;
    this.answered = true;
    const { res } = this.r;
    const { limits } = this;
    const declared = headers['content-length'];
    const length = typeof declared === 'string' ? Number(declared) : -1;
    if (length > limits.maxResponseBytes) {
      controller.abort(answerTooLarge(limits.maxResponseBytes));
      return;
    }
    this.length = length;
    if (length === -1) this.relayed = 0;
    this.closeDelimited = length === -1 && headers['transfer-encoding'] === undefined;
    const out = responseHeadersFrom(headers);
    // The node answered before the client's body was all read (a 404, an early refusal): the
    // connection closes after this answer, gently (http/unread-body.ts).
    if (closeAfterUnreadBody(this.r.req, res)) out.push('connection', 'close');
    const { onAnswer } = this.r;
    if (!onAnswer) {
      res.writeHead(status, message, out);
      return;
    }
    this.held = [];
    onAnswer(status)
      .then(() => this.release(status, message, out))
      .catch((err: unknown) => {
        this.held = undefined;
        if (this.finished) return;
        this.controller?.abort(err as Error);
        this.failOrCut(err);
      });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.finished) return;
    if (this.relayed !== -1) {
      this.relayed += chunk.length;
      if (this.relayed > this.limits.maxResponseBytes) {
        controller.abort(answerTooLarge(this.limits.maxResponseBytes));
        return;
      }
    }
    if (this.held) {
      this.held.push(chunk);
      return;
    }
    if (chunk.length === this.length) {
      // The common case, the whole declared body in one read: as a latin1 string (byte for byte)
      // node:http joins it to the head, so one string goes out rather than a head and a Buffer
      // (bench/gateway.ts: a writev less per request).
      this.finished = true;
      this.r.res.end(chunk.toString('latin1'), 'latin1');
      return;
    }
    if (this.r.res.write(chunk)) return;
    // The client reads slower than the node answers: read from the node as the client catches up.
    controller.pause();
    this.r.res.once('drain', () => controller.resume());
  }

  onResponseEnd() {
    if (this.finished) return;
    if (this.closeDelimited && resetting) return this.cut();
    if (this.held) {
      this.heldEnd = true;
      return;
    }
    this.finished = true;
    this.r.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error) {
    if (this.finished) return;
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (!this.answered && this.mayRetry && DROPPED.has(code)) {
      // The node closed an idle kept-alive connection as the request went out: send it again once,
      // on the next turn, once the pool has taken the dropped connection back (so the retry goes
      // out on a new connection in its place rather than past it).
      this.mayRetry = false;
      this.controller = undefined;
      setImmediate(() => {
        if (!this.finished) this.start();
      });
      return;
    }
    this.failOrCut(err);
  }

  /** `onAnswer` is done: the held answer goes to the client. */
  private release(status: number, message: string | undefined, headers: string[]) {
    const held = this.held!;
    this.held = undefined;
    if (this.finished) return;
    const { res } = this.r;
    res.writeHead(status, message, headers);
    for (const chunk of held) res.write(chunk);
    if (this.heldEnd) {
      this.finished = true;
      res.end();
    }
  }

  private failOrCut(err: unknown) {
    if (this.r.res.headersSent) return this.cut();
    this.finished = true;
    const failure = nodeFailure(err, this.r.endpoint);
    // The rest of an oversized body is never read: close the connection after answering.
    this.r.fail(failure, failure.code === 'payload_too_large' ? { connection: 'close' } : undefined);
  }

  private cut() {
    this.finished = true;
    this.r.res.destroy();
  }

  private clientClosed() {
    if (this.r.res.writableFinished || this.finished) return;
    this.finished = true;
    this.controller?.abort(new Error('the client went away'));
  }
}
