// The load generator of bench/vss.ts, run as its own process (forked with IPC) so that the service
// in the parent is measured on its own event loop: the signing and the HTTP client's work happen
// here. Each node identity's key is made and its Authorization header signed once, before any
// measured run. That costs the server exactly what a live client costs it: the server remembers a
// verified header for the rest of its second only (src/vss/sigs-auth.ts), so a key's first request
// in each second is verified whether its header is new that second (a live client) or not (this).
import http from 'node:http';
import protobuf from 'protobufjs';
import { newVssKey } from '../test/helpers/vss-client.ts';
import { runAtRate, runLoad, type LoadResult } from './load.ts';

export type VssLoadCommand =
  /** Make one key per URL path and sign its header; answers the keys (hex), in order. */
  | { kind: 'prepare'; base: string; paths: string[]; connections: number }
  /** Closed loop: `concurrency` callers; each identity writes `burst` keys in turn. */
  | { kind: 'closed'; valueBytes: number; burst: number; concurrency: number; durationMs: number }
  /** Open loop: a put every 1/perSecond s whether or not the earlier ones answered. */
  | { kind: 'rate'; valueBytes: number; burst: number; perSecond: number; durationMs: number }
  /** One put from each identity in turn (not measured): binds each key, warms the connections. */
  | { kind: 'warm'; valueBytes: number };

export interface VssLoadResult extends LoadResult {
  /** Closed loop: every request's latency, ms (to pool rounds). */
  latencies?: number[];
  /** Answers by HTTP status ('error' for a request that failed without one). */
  statuses: Record<string, number>;
  /** This process's CPU during the run, ms (user + system). */
  cpuMs: number;
}

export type VssLoadReply = { ok: true; pubkeys?: string[]; result?: VssLoadResult } | { ok: false; error: string };

const type = protobuf.loadSync(new URL('../src/vss/vss.proto', import.meta.url).pathname).lookupType('vss.PutObjectRequest');

interface Identity {
  path: string;
  storeId: string;
  header: string;
}

let identities: Identity[] = [];
let post: (path: string, authorization: string, body: Buffer) => Promise<number>;

function poster(base: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const url = new URL(base);
  return (path: string, authorization: string, body: Buffer) =>
    new Promise<number>((resolve) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { authorization, 'content-type': 'application/octet-stream', 'content-length': body.length } },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
}

/** The n-th put of a run: identity n / burst (round robin), key n % burst, version -1 (what RLN writes). */
// Where the last run stopped: the next run goes on to the identities after, as a node's writes
// come round again only after the other nodes' (not straight back to the first identity).
let sent = 0;

function putter(valueBytes: number, burst: number, statuses: Record<string, number>) {
  const value = Buffer.alloc(valueBytes, 1);
  return async () => {
    const n = sent++;
    const id = identities[Math.floor(n / burst) % identities.length]!;
    const body = Buffer.from(type.encode(type.fromObject({ storeId: id.storeId, transactionItems: [{ key: `key_${n % burst}`, version: -1, value }] })).finish());
    const status = await post(id.path, id.header, body);
    const label = status === 0 ? 'error' : String(status);
    statuses[label] = (statuses[label] ?? 0) + 1;
  };
}

async function measured(run: (statuses: Record<string, number>) => Promise<LoadResult>): Promise<VssLoadResult> {
  const statuses: Record<string, number> = {};
  const cpu = process.cpuUsage();
  const result = await run(statuses);
  const used = process.cpuUsage(cpu);
  return { ...result, statuses, cpuMs: (used.user + used.system) / 1000 };
}

process.on('message', async (cmd: VssLoadCommand) => {
  let reply: VssLoadReply;
  try {
    if (cmd.kind === 'prepare') {
      post = poster(cmd.base, cmd.connections);
      identities = cmd.paths.map((path) => {
        const key = newVssKey();
        return { path, storeId: key.publicKey.toString('hex'), header: key.token() };
      });
      reply = { ok: true, pubkeys: identities.map((i) => i.storeId) };
    } else if (cmd.kind === 'warm') {
      const result = await measured(async (statuses) => {
        const put = putter(cmd.valueBytes, 1, statuses);
        let started = 0;
        await Promise.all(Array.from({ length: 16 }, async () => {
          while (started < identities.length) {
            started++;
            await put();
          }
        }));
        sent = 0;
        return { requests: started, perSecond: NaN, p50Ms: NaN, p99Ms: NaN };
      });
      reply = { ok: true, result };
    } else if (cmd.kind === 'closed') {
      const latencies: number[] = [];
      const result = await measured((statuses) => runLoad(putter(cmd.valueBytes, cmd.burst, statuses), { concurrency: cmd.concurrency, durationMs: cmd.durationMs, latencies }));
      reply = { ok: true, result: { ...result, latencies } };
    } else {
      const result = await measured((statuses) => runAtRate(putter(cmd.valueBytes, cmd.burst, statuses), { perSecond: cmd.perSecond, durationMs: cmd.durationMs }));
      reply = { ok: true, result };
    }
  } catch (err) {
    reply = { ok: false, error: (err as Error).message };
  }
  process.send!(reply);
});
process.on('disconnect', () => process.exit(0));
