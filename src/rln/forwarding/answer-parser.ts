// Reads a node's HTTP/1.1 answers off a pooled connection, for the gateways' forwarding path
// (exchange.ts). Hand-written rather than node:http's client so that a proxied request costs
// a few string operations instead of a ClientRequest, an IncomingMessage and a stream pipe. Strict
// on purpose: anything that is not plainly one well-framed answer (a malformed status line or
// header, conflicting or repeated-but-different Content-Length, Transfer-Encoding other than
// chunked, bytes after the end of the answer) is an error, the client gets 502 and the connection
// is never reused, so an answer can never be misread as the end of one and the start of another.

/** What the parser found at the end of an answer's head. */
export interface AnswerHead {
  status: number;
  reason: string;
  /** Header names and values as sent (name, value, name, value, ...), latin1 as node:http reads them. */
  rawHeaders: string[];
  /** The body's length from Content-Length; -1 when chunked or delimited by the connection's close. */
  length: number;
}

export interface AnswerSink {
  /** Returns false to give up on the answer: the parser reads nothing more (the connection is dropped). */
  head(head: AnswerHead): boolean;
  /**
   * A piece of the body: `data[start, end)`, only valid during the call (the connection's read
   * buffer is reused). `last`: the body is complete with it. Returns false to stop reading for now.
   */
  body(data: Buffer, start: number, end: number, last: boolean): boolean;
  /** The answer is complete; `reusable`: the connection may carry another request. */
  end(reusable: boolean): void;
}

// node:http's default limit for a head (--max-http-header-size).
const MAX_HEAD_BYTES = 16 * 1024;
const MAX_CHUNK_LINE = 1024;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9][0-9]{2})(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?$/;
// A token, a colon, and a value without control characters (HTAB allowed); no obs-fold.
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*$/;
const DIGITS = /^[0-9]{1,15}$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?$/;

export class AnswerError extends Error {}

const enum State {
  Head,
  Fixed,
  UntilClose,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  Done,
  Abandoned,
}

/** One answer at a time; `reset` before the next request on the same connection. */
export class NodeAnswerParser {
  private state = State.Head;
  private pending = '';
  private remaining = 0;
  private keepAlive = true;
  private trailerBytes = 0;
  private sink!: AnswerSink;
  private noBody = false;

  /** `noBody`: the request was HEAD, so the answer has a head only whatever it declares. */
  reset(sink: AnswerSink, noBody: boolean) {
    this.sink = sink;
    this.noBody = noBody;
    this.state = State.Head;
    this.pending = '';
    this.remaining = 0;
    this.keepAlive = true;
    this.trailerBytes = 0;
  }

  /** Nothing of the answer has been read yet (a closed pooled connection can be retried). */
  get untouched() {
    return this.state === State.Head && this.pending === '';
  }

  get done() {
    return this.state === State.Done;
  }

  /** Feeds `data[start, end)`. Throws AnswerError on a malformed answer. Returns false to pause reading. */
  execute(data: Buffer, start: number, end: number): boolean {
    let at = start;
    let more = true;
    while (at < end) {
      switch (this.state) {
        case State.Head:
          at = this.readHead(data, at, end);
          break;
        case State.Fixed: {
          const n = Math.min(this.remaining, end - at);
          this.remaining -= n;
          const last = this.remaining === 0;
          if (last) this.state = State.Done;
          more = this.sink.body(data, at, at + n, last) && more;
          at += n;
          if (last) this.finish();
          break;
        }
        case State.UntilClose:
          more = this.sink.body(data, at, end, false) && more;
          at = end;
          break;
        case State.ChunkSize:
        case State.ChunkDataEnd:
        case State.Trailers:
          at = this.readChunkLine(data, at, end);
          break;
        case State.ChunkData: {
          const n = Math.min(this.remaining, end - at);
          this.remaining -= n;
          if (this.remaining === 0) this.state = State.ChunkDataEnd;
          more = this.sink.body(data, at, at + n, false) && more;
          at += n;
          break;
        }
        case State.Done:
          throw new AnswerError('the node sent bytes after the end of its answer');
        case State.Abandoned:
          return false;
      }
    }
    return more;
  }

  /** The node closed the connection: the end of a body read until close, else a cut answer. */
  closed() {
    if (this.state === State.UntilClose) {
      this.state = State.Done;
      this.sink.body(Buffer.alloc(0), 0, 0, true);
      this.sink.end(false);
      return;
    }
    if (this.state !== State.Done && this.state !== State.Abandoned) throw new AnswerError('the node closed the connection in the middle of its answer');
  }

  private finish() {
    this.state = State.Done;
    this.sink.end(this.keepAlive);
  }

  private readHead(data: Buffer, at: number, end: number): number {
    const text = this.pending + data.toString('latin1', at, end);
    const stop = text.indexOf('\r\n\r\n');
    if (stop === -1) {
      if (text.length > MAX_HEAD_BYTES) throw new AnswerError('the head of the node\'s answer is too large');
      this.pending = text;
      return end;
    }
    if (stop > MAX_HEAD_BYTES) throw new AnswerError('the head of the node\'s answer is too large');
    // The bytes of `data` consumed: the head's end, less what came from earlier reads.
    const consumed = at + stop + 4 - this.pending.length;
    this.pending = '';
    this.parseHead(text.slice(0, stop));
    return consumed;
  }

  private parseHead(head: string) {
    const lines = head.split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw new AnswerError('the node\'s status line is malformed');
    const code = Number(status[2]);
    const rawHeaders: string[] = [];
    let length = -1;
    let chunked = false;
    let close = status[1] === '0';
    for (let i = 1; i < lines.length; i++) {
      const line = HEADER_LINE.exec(lines[i]!);
      if (!line) throw new AnswerError('a header of the node\'s answer is malformed');
      const name = line[1]!;
      const value = line[2]!;
      rawHeaders.push(name, value);
      // Only the three framing headers matter here; compare lengths first, most names differ.
      if (name.length === 14 && name.toLowerCase() === 'content-length') {
        for (const part of value.split(',')) {
          const v = part.trim();
          if (!DIGITS.test(v) || (length !== -1 && Number(v) !== length)) throw new AnswerError('the node\'s Content-Length is malformed or ambiguous');
          length = Number(v);
        }
      } else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') {
        if (chunked || value.toLowerCase() !== 'chunked') throw new AnswerError('the node\'s Transfer-Encoding is not plain chunked');
        chunked = true;
      } else if (name.length === 10 && name.toLowerCase() === 'connection') {
        if (/(^|,)[ \t]*close[ \t]*(,|$)/i.test(value)) close = true;
      }
    }
    if (chunked && length !== -1) throw new AnswerError('the node\'s answer has both Content-Length and Transfer-Encoding');
    // 1xx: an interim answer (RLN sends none, Expect never reaches it); the real one follows.
    if (code < 200) {
      if (code === 101) throw new AnswerError('the node switched protocols');
      return;
    }
    this.keepAlive = !close;
    const bodyless = this.noBody || code === 204 || code === 304;
    if (!this.sink.head({ status: code, reason: status[3] ?? '', rawHeaders, length: bodyless ? 0 : chunked ? -1 : length })) {
      this.state = State.Abandoned;
      return;
    }
    if (bodyless || length === 0) this.finish();
    else if (chunked) this.state = State.ChunkSize;
    else if (length > 0) {
      this.state = State.Fixed;
      this.remaining = length;
    } else {
      this.state = State.UntilClose;
      this.keepAlive = false;
    }
  }

  /** The size line of a chunk, the CRLF after its data, or a trailer line. */
  private readChunkLine(data: Buffer, at: number, end: number): number {
    const lf = data.indexOf(10, at);
    const stop = lf === -1 || lf >= end ? end : lf;
    const line = this.pending + data.toString('latin1', at, stop);
    if (lf === -1 || lf >= end) {
      if (line.length > MAX_CHUNK_LINE) throw new AnswerError('a chunk line of the node\'s answer is too long');
      this.pending = line;
      return end;
    }
    this.pending = '';
    if (!line.endsWith('\r')) throw new AnswerError('a chunk line of the node\'s answer does not end in CRLF');
    const content = line.slice(0, -1);
    if (this.state === State.ChunkDataEnd) {
      if (content !== '') throw new AnswerError('a chunk of the node\'s answer is longer than it said');
      this.state = State.ChunkSize;
    } else if (this.state === State.ChunkSize) {
      const size = CHUNK_SIZE.exec(content);
      if (!size) throw new AnswerError('a chunk size of the node\'s answer is malformed');
      this.remaining = parseInt(size[1]!, 16);
      this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
    } else if (content === '') {
      // Trailers are dropped, as node:http's pipe drops them.
      this.sink.body(data, stop, stop, true);
      this.finish();
    } else {
      this.trailerBytes += line.length;
      if (this.trailerBytes > MAX_HEAD_BYTES || !HEADER_LINE.test(content)) throw new AnswerError('a trailer of the node\'s answer is malformed');
    }
    return stop + 1;
  }
}
