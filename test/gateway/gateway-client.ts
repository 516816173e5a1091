// Clients for the node access gateways as a user's program would be: plain HTTP with a token,
// HTTPS with a client certificate, and raw requests whose path no client library normalises.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export interface RawResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  text: string;
  json: any;
}

export interface RawOptions {
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  agent?: http.Agent | https.Agent | false;
}

function collect(res: http.IncomingMessage): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {}
      resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, text, json });
    });
  });
}

/** An HTTP request with the path sent byte for byte as given. */
export function rawRequest(base: string, path: string, opts: RawOptions = {}): Promise<RawResult> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: opts.method ?? 'GET', headers: opts.headers, agent: opts.agent ?? false }, (res) =>
      collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export interface ClientCredentials {
  certificate: string;
  privateKey: string;
  certificateChain: string;
}

/** An HTTPS request presenting a client certificate (or none), verifying the gateway with the CA. */
export function tlsRequest(base: string, path: string, creds: Partial<ClientCredentials> & { ca: string }, opts: RawOptions = {}): Promise<RawResult & { reusedSocket: boolean }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: opts.method ?? 'GET',
        headers: opts.headers,
        cert: creds.certificate,
        key: creds.privateKey,
        ca: creds.ca,
        agent: opts.agent ?? false,
      },
      (res) => collect(res).then((r) => resolve({ ...r, reusedSocket: req.reusedSocket }), reject),
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Sends bytes over a plain socket and answers everything the server sent until it closed. */
export function rawSocket(base: string, chunks: Array<{ data: string; delayMs?: number }>, waitMs = 10_000): Promise<{ received: string; closedAfterMs: number }> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(url.port), url.hostname);
    let received = '';
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
    void (async () => {
      for (const c of chunks) {
        if (c.delayMs) await new Promise((r) => setTimeout(r, c.delayMs));
        if (socket.destroyed) return;
        socket.write(c.data);
      }
    })();
  });
}
