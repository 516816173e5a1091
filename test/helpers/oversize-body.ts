// A client that sends a request body larger than the server accepts, in chunks, on a kept-alive
// connection, the way a streaming upload does, and reports what it saw: the answer, and how the
// connection ended (a clean close after the answer, or a reset that may cut the answer short).
import net from 'node:net';
import tls from 'node:tls';

export interface OversizeOptions {
  host: string;
  port: number;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  /** How much the client is willing to send in all: far past the server's limit. */
  totalBytes: number;
  /** For the mutual-TLS gateway. */
  tls?: tls.ConnectionOptions;
}

export interface OversizeResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The connection's error (ECONNRESET, EPIPE), if any, and whether the answer was whole before it. */
  error?: string;
  answeredBeforeError: boolean;
  /** The server closed its side cleanly (FIN). */
  ended: boolean;
}

const CHUNK = Buffer.alloc(16 * 1024, 0x61);

export function sendOversizeChunked(opts: OversizeOptions): Promise<OversizeResult> {
  return new Promise((resolve) => {
    const socket: net.Socket = opts.tls ? tls.connect({ host: opts.host, port: opts.port, ...opts.tls }) : net.connect({ host: opts.host, port: opts.port });
    let received = Buffer.alloc(0);
    let answer: Omit<OversizeResult, 'error' | 'answeredBeforeError' | 'ended'> | undefined;
    let error: string | undefined;
    let answeredBeforeError = false;
    let ended = false;
    let sent = 0;

    const parse = () => {
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const [statusLine, ...lines] = received.subarray(0, headEnd).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? NaN);
      const body = received.subarray(headEnd + 4);
      if (Number.isFinite(length) && body.length < length) return;
      answer = { status: Number(statusLine!.split(' ')[1]), headers, body: body.subarray(0, Number.isFinite(length) ? length : undefined).toString('utf8') };
    };
    const pump = () => {
      // Stop sending once answered, as a client reading its answers would.
      while (!answer && !error && sent < opts.totalBytes && !socket.destroyed) {
        sent += CHUNK.length;
        // All three parts of a chunk, whatever the first writes answer: stopping after a `false`
        // would leave a chunk half framed (a TLS socket says `false` far sooner than a TCP one).
        socket.write(`${CHUNK.length.toString(16)}\r\n`);
        socket.write(CHUNK);
        const ok = socket.write('\r\n');
        if (!ok) return socket.once('drain', pump);
      }
      if (!answer && !error && sent >= opts.totalBytes && socket.writable) socket.write('0\r\n\r\n');
    };
    const ready = () => {
      const head = [`${opts.method ?? 'POST'} ${opts.path} HTTP/1.1`, `host: ${opts.host}:${opts.port}`, 'connection: keep-alive', 'transfer-encoding: chunked'];
      for (const [k, v] of Object.entries(opts.headers ?? {})) head.push(`${k}: ${v}`);
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      pump();
    };
    socket.once(opts.tls ? 'secureConnect' : 'connect', ready);
    socket.on('data', (data) => {
      received = Buffer.concat([received, data]);
      if (!answer) parse();
    });
    socket.on('end', () => {
      ended = true;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
      answeredBeforeError = answer !== undefined;
    });
    socket.on('close', () => {
      if (!answer) parse();
      resolve({ ...(answer ?? { status: 0, headers: {}, body: received.toString('latin1').slice(0, 200) }), error, answeredBeforeError, ended });
    });
    // A server that keeps the connection open after its answer: the client hangs up after a while.
    socket.setTimeout(10_000, () => socket.destroy());
  });
}
