// A real webhook receiver for tests: an HTTP server on loopback that records every request with
// its raw body and headers, and answers what the test tells it to.
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  /** X-ThunderStack-Signature, the original service's header; undefined when not sent. */
  thunderStackSignature: string | undefined;
  body: string;
  json: any;
  path: string;
  /** The receiver answered 2xx to this request. */
  answeredOk: boolean;
}

export type Answer = { status: number; headers?: Record<string, string> };

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Decides the answer to each request (default 204); may take its time (a receiver fetching keys). */
  answer: (w: ReceivedWebhook) => Answer | Promise<Answer>;
  waitFor(predicate: (all: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A request that is not a webhook (a stray one, on a port another test thought it had) is kept too. */
function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** `host`: where it listens (the test cluster's pods reach the node address 198.18.1.1, not loopback). */
export async function startReceiver(port = 0, host = '127.0.0.1'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => ({ status: 204 }),
    async waitFor(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) {
          throw new Error(`receiver: condition not met within ${timeoutMs} ms; got ${JSON.stringify(receiver.received.map((r) => r.json))}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return receiver.received;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const w: ReceivedWebhook = {
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        thunderStackSignature: req.headers['x-thunderstack-signature'] as string | undefined,
        body,
        json: parseJson(body),
        path: req.url ?? '',
        answeredOk: false,
      };
      void Promise.resolve(receiver.answer(w)).then(({ status, headers }) => {
        w.answeredOk = status >= 200 && status < 300;
        receiver.received.push(w);
        res.writeHead(status, headers).end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  receiver.port = (server.address() as { port: number }).port;
  receiver.url = `http://${host}:${receiver.port}/hook`;
  return receiver;
}

const VERIFIER = fileURLToPath(new URL('./verify_signatures.py', import.meta.url));

/** For each message, for each key: does a signature verify (checked by the Python verifier). */
export function verifyWithPython(publicKeys: string[], messages: ReceivedWebhook[]): boolean[][] {
  const r = spawnSync('python3', [VERIFIER], {
    input: JSON.stringify({ publicKeys, messages: messages.map(({ id, timestamp, body, signature }) => ({ id, timestamp, body, signature })) }),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`python verifier failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
