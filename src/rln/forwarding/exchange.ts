// One request forwarded to a node on a pooled connection (connection-pool.ts), its answer read
// by answer-parser.ts and relayed to the client's ServerResponse. A class rather than closures:
// the per-request state lives in one object and its steps are methods created once.
//
// Failures: a node that refuses or drops the connection before answering is 502, one that stays
// silent past the timeout 504, a malformed or oversized answer 502; once the answer has begun, a
// failure can only cut the client's connection. A connection is reused only after a complete,
// well-framed answer to a completely sent request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../errors.ts';
import { closeAfterUnreadBody } from '../../http/unread-body.ts';
import { requestTooLarge, type RlnEndpoint as NodeEndpoint } from '../failures.ts';
import { responseHeadersInto } from '../forward-headers.ts';
import { AnswerError, NodeAnswerParser, type AnswerHead, type AnswerSink } from './answer-parser.ts';
import type { ConnectionUser, NodeConnection, NodeConnectionPool } from './connection-pool.ts';

/** Answers a failure before the node's answer began, in the caller's error shape. */
export type AnswerFailure = (err: AppError, headers?: Record<string, string>) => void;

export interface ExchangeLimits {
  timeoutMs: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
}


const isReset = (err: Error | undefined) => err === undefined || (err as NodeJS.ErrnoException).code === 'ECONNRESET' || (err as NodeJS.ErrnoException).code === 'EPIPE';

export class NodeExchange implements ConnectionUser, AnswerSink {
  private connection: NodeConnection | undefined;
  private readonly parser = new NodeAnswerParser();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  /** The node's head arrived (or the request was refused): a failure now can only cut the client. */
  private answered = false;
  /** Nothing more to do: the answer was relayed, or the exchange failed or was abandoned. */
  private finished = false;
  private requestSent = false;
  private bodyStarted = false;
  private relayed = 0;
  private unknownLength = false;
  /** While `onAnswer` runs, the node's body waits here (with `heldEnd` once it is complete). */
  private held: Buffer[] | undefined;
  private heldEnd = false;
  /** The answer is complete and said the connection may carry another request. */
  private reusable = false;

  constructor(
    private readonly pool: NodeConnectionPool,
    private readonly limits: ExchangeLimits,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly endpoint: NodeEndpoint,
    private readonly requestHead: string,
    /** The request body's framing towards the node: none, as declared (Content-Length), or chunked. */
    private readonly requestBody: 'none' | 'fixed' | 'chunked',
    private readonly answerFailure: AnswerFailure,
    private mayRetry: boolean,
    private readonly onAnswer: ((status: number) => Promise<void>) | undefined,
  ) {
    // The client went away: stop the node's work on its behalf too.
    res.once('close', () => this.clientClosed());
  }

  start() {
    this.pool.lease(this.endpoint, this);
  }

  leased(connection: NodeConnection) {
    if (this.finished) return connection.release(true);
    this.connection = connection;
    this.parser.reset(this, this.req.method === 'HEAD');
    this.timer = setTimeout(() => this.timeout(), this.limits.timeoutMs);
    connection.socket.write(this.requestHead, 'latin1');
    if (this.requestBody === 'none') this.requestSent = true;
    else this.sendBody();
  }

  received(data: Buffer, start: number, end: number): boolean {
    // Like a socket timeout: the node has this long between any two reads, not for the whole answer.
    this.timer?.refresh();
    let more: boolean;
    try {
      more = this.parser.execute(data, start, end);
    } catch (err) {
      // Thrown here, anything would end the process (this runs in the socket's read callback):
      // a malformed answer is the node's fault (502), anything else answers 500.
      this.broken(err instanceof AnswerError ? new AppError('node_error', `the node's answer is malformed: ${err.message}`) : err);
      return false;
    }
    // Handed back only now that the whole read is parsed: a byte past the answer would have thrown.
    if (this.parser.done && this.connection) {
      const connection = this.connection;
      this.connection = undefined;
      connection.release(this.reusable && this.requestSent);
    }
    return more;
  }

  closed(err: Error | undefined) {
    const connection = this.connection;
    this.connection = undefined;
    if (this.finished) return;
    if (this.answered) {
      // A clean close ends an answer delimited by the connection; after a timeout or an error the
      // same close is a cut, and the client must not take what it got for the whole answer.
      if (!this.timedOut && err === undefined) {
        try {
          this.parser.closed();
        } catch {}
      }
      if (this.finished || this.heldEnd) return;
      // Cut in the middle of the answer: while `onAnswer` held it back the client can still be told.
      if (this.res.headersSent) this.cut();
      else this.fail(unreachable(err, this.endpoint));
      return;
    }
    if (!this.timedOut && this.mayRetry && connection?.reused && this.parser.untouched && isReset(err)) {
      // The node closed an idle kept-alive connection as the request went out: send it again once.
      this.mayRetry = false;
      clearTimeout(this.timer);
      this.pool.lease(this.endpoint, this);
      return;
    }
    this.fail(this.timedOut ? new AppError('node_timeout', 'the node did not answer in time') : unreachable(err, this.endpoint));
  }

  head(head: AnswerHead): boolean {
    this.answered = true;
    const { res, limits } = this;
    if (head.length > limits.maxResponseBytes) {
      this.broken(new AppError('node_error', `the node's answer is larger than ${limits.maxResponseBytes} bytes`));
      return false;
    }
    this.unknownLength = head.length === -1;
    const headers: string[] = [];
    responseHeadersInto(head.rawHeaders, headers);
    // The node answered before the client's body was all read (a 404, an early refusal): the
    // connection closes after this answer, gently (http-unread-body.ts).
    if (closeAfterUnreadBody(this.req, res)) headers.push('connection', 'close');
    if (!this.onAnswer) {
      res.writeHead(head.status, head.reason, headers);
      return true;
    }
    this.held = [];
    this.onAnswer(head.status)
      .then(() => this.release(head, headers))
      .catch((err) => {
        this.held = undefined;
        if (this.finished) return;
        this.connection?.destroy();
        if (this.res.headersSent) this.cut();
        else this.fail(err);
      });
    return true;
  }

  body(data: Buffer, start: number, end: number, last: boolean): boolean {
    if (this.unknownLength) {
      this.relayed += end - start;
      if (this.relayed > this.limits.maxResponseBytes) {
        this.connection?.destroy();
        this.cut();
        return false;
      }
    }
    if (last && !this.held) {
      // The common case, the whole body (or its end) in this read: as a latin1 string (byte for
      // byte, and a copy, as it must be: `data` is the connection's read buffer) node:http joins
      // it to the head, so one string goes out rather than a head string and a Buffer (measured
      // with bench/gateway.ts: ~4 µs less CPU per request through the bearer gateway, ~8 over TLS).
      this.res.end(data.toString('latin1', start, end), 'latin1');
      return true;
    }
    // A copy: `data` is the connection's read buffer, and the client's socket may hold on to it.
    const chunk = Buffer.allocUnsafe(end - start);
    data.copy(chunk, 0, start, end);
    if (this.held) {
      this.held.push(chunk);
      return true;
    }
    if (last) {
      this.res.end(chunk);
      return true;
    }
    if (this.res.write(chunk)) return true;
    // The client reads slower than the node answers: read from the node as the client catches up.
    this.res.once('drain', () => this.connection?.socket.resume());
    return false;
  }

  end(reusable: boolean) {
    clearTimeout(this.timer);
    this.reusable = reusable;
    if (this.held) {
      this.heldEnd = true;
      return;
    }
    this.finished = true;
    if (!this.res.writableEnded) this.res.end();
  }

  /** `onAnswer` is done: the held answer goes to the client. */
  private release(head: AnswerHead, headers: string[]) {
    const held = this.held!;
    this.held = undefined;
    if (this.finished) return;
    this.res.writeHead(head.status, head.reason, headers);
    for (const chunk of held) this.res.write(chunk);
    if (this.heldEnd) {
      this.finished = true;
      this.res.end();
    }
  }

  private sendBody() {
    const { req, limits } = this;
    const chunked = this.requestBody === 'chunked';
    let received = 0;
    // A retried request has no body, so this runs once per exchange.
    if (this.bodyStarted) return;
    this.bodyStarted = true;
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxRequestBytes) {
        req.removeAllListeners('data');
        this.connection?.destroy();
        this.answered = true;
        this.finished = true;
        clearTimeout(this.timer);
        // The rest of the body is never read: close the connection after answering.
        this.answerFailure(requestTooLarge(limits.maxRequestBytes), { connection: 'close' });
        return;
      }
      const socket = this.connection?.socket;
      if (!socket) return;
      this.timer?.refresh();
      const flowing = chunked ? socket.write(`${chunk.length.toString(16)}\r\n`) && socket.write(chunk) && socket.write('\r\n') : socket.write(chunk);
      if (!flowing) {
        req.pause();
        socket.once('drain', () => req.resume());
      }
    });
    req.on('end', () => {
      if (chunked) this.connection?.socket.write('0\r\n\r\n');
      this.requestSent = true;
    });
    req.on('error', () => this.connection?.destroy());
  }

  private timeout() {
    this.timedOut = true;
    this.connection?.destroy();
  }

  /** A bad answer from the node: the connection is dropped, and the client told or cut. */
  private broken(err: unknown) {
    this.connection?.destroy();
    this.connection = undefined;
    // Stray bytes after a complete answer: the client has all of it, only the connection is dropped.
    if (this.finished) return;
    if (this.answered && this.res.headersSent) return this.cut();
    this.fail(err);
  }

  private fail(err: unknown) {
    this.finished = true;
    clearTimeout(this.timer);
    if (this.res.headersSent) return void this.res.destroy();
    this.answerFailure(err instanceof AppError ? err : new AppError('internal_error', 'an internal error occurred; quote the requestId when reporting it'));
  }

  private cut() {
    this.finished = true;
    clearTimeout(this.timer);
    this.res.destroy();
  }

  private clientClosed() {
    if (this.res.writableFinished || this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    if (this.connection) this.connection.destroy();
    else this.pool.withdraw(this.endpoint, this);
  }
}

function unreachable(err: Error | undefined, endpoint: NodeEndpoint) {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'connection closed';
  return new AppError('node_unreachable', `the node is not answering (${code})`, { port: endpoint.port });
}
