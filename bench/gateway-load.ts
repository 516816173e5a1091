// The load generator of bench/gateway.ts, run as its own process (forked with IPC) so that it does
// not share an event loop with the gateway it measures (the service runs in the parent). Requests:
// by default raw keep-alive sockets (bench/raw-http-load.ts); with BENCH_GATEWAY_LOADGEN=agent the
// closed loop over keep-alive agents (maxSockets = connections) as bench/http-client.ts, the
// generator of earlier figures. And new mTLS handshakes, each on a fresh connection without
// session resumption.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { runLoad, type LoadResult } from './load.ts';
import { LOAD_GENERATOR, openRaw, runRaw } from './raw-http-load.ts';

export interface LoadTarget {
  name: string;
  url: string;
  headers: Record<string, string>;
  tls?: { cert: string; key: string; ca: string };
}

export type LoadCommand =
  /** Open the target's connections before a measured run (the agent opens them as it goes). */
  | { kind: 'open'; target: LoadTarget; connections: number }
  | { kind: 'requests'; target: LoadTarget; connections: number; durationMs: number }
  | { kind: 'handshakes'; port: number; tls: { cert: string; key: string; ca: string }; concurrency: number; durationMs: number };

export type LoadReply = { ok: true; result: LoadResult } | { ok: false; error: string };

// One agent per target and connection count, kept across rounds so connections stay warm.
const agents = new Map<string, http.Agent>();

function getter(target: LoadTarget, connections: number) {
  const url = new URL(target.url);
  const key = `${target.name}/${connections}`;
  let agent = agents.get(key);
  if (!agent) {
    // Idle connections close at 4 s: the servers measured close theirs at 5 s (node:http's
    // keep-alive timeout), and a request sent on one just as its server closes it would fail the
    // run ("socket hang up"); between rounds a connection can sit idle about that long.
    const pool = { keepAlive: true, maxSockets: connections, timeout: 4_000 };
    agent = target.tls ? new https.Agent({ ...pool, ...target.tls }) : new http.Agent(pool);
    agents.set(key, agent);
  }
  const client = target.tls ? https : http;
  const options = { host: url.hostname, port: url.port, path: url.pathname + url.search, headers: target.headers, agent };
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = client.get(options, (res) => {
        if (res.statusCode !== 200) reject(new Error(`${target.name}: GET ${url.pathname} answered ${res.statusCode}`));
        res.on('data', () => {});
        res.on('end', resolve);
      });
      // Named, so that a failed run says which path failed.
      req.on('error', (err) => reject(new Error(`${target.name}: ${err.message}`)));
    });
}

function handshake(port: number, creds: { cert: string; key: string; ca: string }) {
  return () =>
    new Promise<void>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ...creds }, () => {
        if (!socket.authorized) return reject(new Error(`handshake not authorized: ${socket.authorizationError}`));
        // With TLS 1.3 the server checks the client's certificate after the client is done:
        // wait for the server to close in turn, so its whole share of the handshake is counted.
        socket.end();
      });
      socket.on('data', () => {});
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
}

process.on('message', async (cmd: LoadCommand) => {
  let reply: LoadReply;
  try {
    if (cmd.kind === 'open' && LOAD_GENERATOR === 'raw') await openRaw(cmd.target, cmd.connections);
    const result =
      cmd.kind === 'open' ? { requests: 0, perSecond: 0, p50Ms: NaN, p99Ms: NaN }
      : cmd.kind === 'handshakes' ? await runLoad(handshake(cmd.port, cmd.tls), { concurrency: cmd.concurrency, durationMs: cmd.durationMs })
      : LOAD_GENERATOR === 'raw' ? await runRaw(cmd.target, cmd.connections, cmd.durationMs)
      : await runLoad(getter(cmd.target, cmd.connections), { concurrency: cmd.connections, durationMs: cmd.durationMs });
    reply = { ok: true, result };
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  process.send!(reply);
});
process.on('disconnect', () => process.exit(0));
