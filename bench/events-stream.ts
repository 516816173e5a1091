// 1,000 clients following their nodes' events (GET /api/events/stream) while 200 nodes change
// state. The service runs in a process of its own (the real server, startServer), where its
// nodes are changed through NodeService (unlocked, then locked, round after round: each change a
// transaction that records its event, as the gateway's would), so the streams are woken by the
// commit signal; the clients are plain sockets in this process. Figures: events delivered per
// second, the delay from an event's timestamp (taken in its transaction, just before the commit)
// to its arrival, and the service's resident memory per connected client.
//
//   node --import tsx bench/events-stream.ts [PGlite|PostgreSQL]
//   (the service is this file run with `service [database-url]`)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { startServer } from '../src/app.ts';
import { createLogger } from '../src/logger.ts';
import { latestRelease } from '../src/db/releases.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { idleRssMb, rssMb } from './rss.ts';

const CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 1000);
const NODES = Number(process.env.BENCH_STREAM_NODES ?? 200);
const USERS = Number(process.env.BENCH_STREAM_USERS ?? 100);
const ROUNDS = Number(process.env.BENCH_STREAM_ROUNDS ?? 10);
// Changes in flight at once in the service: node state changes arrive from many callers.
const DRIVE_CONCURRENCY = 16;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface EventStreamFigures {
  clients: number;
  nodes: number;
  events: number;
  deliveries: number;
  commitsPerSecond: number;
  deliveriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  pollReads: number;
  /** With CLIENTS idle streams, then with twice as many. */
  rssIdleMb: number;
  rssClientsMb: number;
  rssPeakMb: number;
  perClientKiB: number;
  /** The JavaScript heap's share (V8 heap and external memory, after a full collection). */
  heapPerClientKiB: number;
  baselinePerClientKiB: number;
}

interface Ready {
  type: 'ready';
  base: string;
  pid: number;
  users: Array<{ token: string; nodes: string[] }>;
}

export async function benchEventStream(database: 'PGlite' | 'PostgreSQL'): Promise<EventStreamFigures> {
  let target: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  if (database === 'PostgreSQL') {
    process.env.TEST_DATABASE_URL = ADMIN_URL;
    target = await createTestDatabase();
  }
  const service = startService(target?.url);
  const clients: StreamClient[] = [];
  try {
    const ready = (await service.next('ready')) as Ready;
    // Clients spread evenly over the users: every event goes to CLIENTS / USERS streams.
    const connect = async (into: StreamClient[]) => {
      for (let i = 0; i < CLIENTS; i++) into.push(await StreamClient.open(ready.base, ready.users[i % ready.users.length]!.token));
    };
    await connect(clients);
    // The cost of a client is measured as the growth from CLIENTS more idle ones: a fresh process
    // keeps giving memory back for a while, which would hide it.
    const withClients = await service.settledMemory();
    const extra: StreamClient[] = [];
    await connect(extra);
    const withMore = await service.settledMemory();
    for (const c of extra) c.close();
    const rssIdle = withClients.rssMb;
    const rssClients = withMore.rssMb;

    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(ready.pid))), 20);
    const t0 = performance.now();
    service.send(`drive ${ROUNDS}`);
    const driven = (await service.next('driven')) as { events: number; seconds: number; reads: number };
    const perUser = NODES / USERS;
    const expected = ROUNDS * perUser;
    const deadline = Date.now() + 120_000;
    while (clients.some((c) => c.delays.length < expected)) {
      if (Date.now() > deadline) throw new Error(`only ${clients.reduce((n, c) => n + c.delays.length, 0)} of ${expected * CLIENTS} deliveries arrived`);
      await sleep(5);
    }
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const delays = clients.flatMap((c) => c.delays).sort((a, b) => a - b);
    const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor(delays.length * p))]!;
    return {
      clients: CLIENTS,
      nodes: NODES,
      events: driven.events,
      deliveries: delays.length,
      commitsPerSecond: driven.events / driven.seconds,
      deliveriesPerSecond: delays.length / seconds,
      p50Ms: pct(0.5),
      p99Ms: pct(0.99),
      maxMs: delays.at(-1)!,
      pollReads: driven.reads,
      rssIdleMb: rssIdle,
      rssClientsMb: rssClients,
      rssPeakMb: peak,
      perClientKiB: ((rssClients - rssIdle) * 1024) / CLIENTS,
      heapPerClientKiB: ((withMore.heapMb - withClients.heapMb) * 1024) / CLIENTS,
      baselinePerClientKiB: await bareSseServerPerClientKiB(CLIENTS),
    };
  } finally {
    for (const c of clients) c.close();
    await service.stop();
    await target?.drop();
  }
}

/** One stream, as lean as a client can be: the delay of every event is all it keeps. */
class StreamClient {
  readonly delays: number[] = [];
  private pending = '';

  private constructor(private readonly res: IncomingMessage) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = Date.now();
      this.pending += chunk;
      let end: number;
      while ((end = this.pending.indexOf('\n\n')) >= 0) {
        const block = this.pending.slice(0, end);
        this.pending = this.pending.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (data) this.delays.push(now - Date.parse(JSON.parse(data.slice(6)).eventTimestamp));
      }
    });
  }

  static open(base: string, token: string): Promise<StreamClient> {
    return new Promise((resolve, reject) => {
      const req = request(`${base}/api/events/stream`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`the stream answered ${res.statusCode}`));
        else resolve(new StreamClient(res));
      });
      req.on('error', reject);
      req.end();
    });
  }

  close() {
    this.res.destroy();
  }
}

/** Baseline: what 1,000 idle text/event-stream responses cost a bare node:http server. */
async function bareSseServerPerClientKiB(clients: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'bare'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => createInterface({ input: child.stdout! }).once('line', (l) => resolve(Number(l))));
  const sockets: IncomingMessage[] = [];
  const connect = async () => {
    for (let i = 0; i < clients; i++) {
      sockets.push(await new Promise((resolve, reject) => request(`http://127.0.0.1:${port}/`, { agent: false }, resolve).on('error', reject).end()));
    }
  };
  try {
    // Measured the same way as the service: the growth from `clients` more.
    await connect();
    const before = await idleRssMb(child.pid!);
    await connect();
    const after = await idleRssMb(child.pid!);
    return ((after - before) * 1024) / clients;
  } finally {
    for (const s of sockets) s.destroy();
    child.kill('SIGTERM');
  }
}

function startService(databaseUrl: string | undefined) {
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), 'service', databaseUrl ?? ''], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const queue: any[] = [];
  const waiters: Array<() => void> = [];
  lines.on('line', (l) => {
    queue.push(JSON.parse(l));
    waiters.splice(0).forEach((w) => w());
  });
  const service = {
    /**
     * Memory after full collections, once RSS has held still for 15 s: an idle process gives pages
     * back in steps for a minute or so after its start, which would hide what clients cost.
     */
    async settledMemory(): Promise<{ rssMb: number; heapMb: number }> {
      const samples: Array<{ rssMb: number; heapMb: number }> = [];
      for (let i = 0; i < 24; i++) {
        service.send('mem');
        samples.push((await service.next('mem')) as { rssMb: number; heapMb: number });
        const recent = samples.slice(-4);
        if (recent.length === 4 && Math.max(...recent.map((m) => m.rssMb)) - Math.min(...recent.map((m) => m.rssMb)) < 1) return recent.at(-1)!;
        await sleep(5000);
      }
      return samples.at(-1)!;
    },
    async next(type: string): Promise<unknown> {
      for (;;) {
        const i = queue.findIndex((m) => m.type === type);
        if (i >= 0) return queue.splice(i, 1)[0];
        if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    send(command: string) {
      child.stdin!.write(`${command}\n`);
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin!.write('stop\n');
      await new Promise((r) => child.once('exit', r));
    },
  };
  return service;
}

/** The service side: the real server, its users, tokens and nodes, and the changes on command. */
async function runService(databaseUrl: string | undefined) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-events-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_API_PORT: String(await freePort()),
    MTLS_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    // The seeded nodes have no daemons: the reconcile pass must not start 200 of them.
    RECONCILE_INTERVAL_MS: '3600000',
    EVENT_STREAMS_PER_USER: String(Math.ceil((2 * CLIENTS) / USERS)),
    DATABASE_URL: databaseUrl || undefined,
  });
  const server = await startServer(config, createLogger('silent'));
  const emit = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
  // The pass at start has run over an empty table; the next one is an hour away.
  await sleep(2000);
  const { db, services } = server;
  const users: Ready['users'] = [];
  const version = (await latestRelease(db))!.version;
  const nodeIds: string[] = [];
  for (let u = 0; u < USERS; u++) {
    const email = `stream${u}@example.com`;
    const user = await services.accounts.createUser({ email, plan: 'starter' });
    const { token } = await services.accounts.createToken(email, 'bench');
    const nodes = await db.query<{ id: string }>(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, rest_port, peer_port)
       SELECT md5($1 || '-' || g), $1, 'n' || g, 'regtest', 'RUNNING', 'running', $2, 20000 + $4::int + g, 30000 + $4::int + g
       FROM generate_series(1, $3::int) g RETURNING id`,
      [user.id, version, NODES / USERS, nodeIds.length],
    );
    nodeIds.push(...nodes.map((n) => n.id));
    users.push({ token, nodes: nodes.map((n) => n.id) });
  }
  emit({ type: 'ready', base: config.publicUrl, pid: process.pid, users });

  for await (const line of createInterface({ input: process.stdin })) {
    const [command, arg] = line.split(' ');
    if (command === 'drive') {
      const t0 = performance.now();
      const rounds = Number(arg);
      for (let round = 0; round < rounds; round++) {
        // Even rounds unlock every node, odd ones lock it again: one event per node and round.
        let next = 0;
        await Promise.all(
          Array.from({ length: DRIVE_CONCURRENCY }, async () => {
            while (next < nodeIds.length) {
              const id = nodeIds[next++]!;
              await (round % 2 === 0 ? services.nodes.markUnlocked(id) : services.nodes.markLocked(id));
              // Each change arrives as its own task, as a request's or a job's would: back-to-back
              // changes on embedded PGlite (promises only, no I/O) would keep the event loop from
              // ever writing to a socket.
              await new Promise((r) => setImmediate(r));
            }
          }),
        );
      }
      const events = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM node_events WHERE event_type IN ('NODE_LOCKED', 'NODE_UNLOCKED')`))[0]!.n;
      emit({ type: 'driven', events, seconds: (performance.now() - t0) / 1000, reads: server.events.hub.reads });
    } else if (command === 'mem') {
      for (let i = 0; i < 3; i++) {
        (globalThis as { gc?: () => void }).gc?.();
        await sleep(100);
      }
      const m = process.memoryUsage();
      emit({ type: 'mem', rssMb: m.rss / 2 ** 20, heapMb: (m.heapUsed + m.external) / 2 ** 20 });
    } else if (command === 'stop') {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    }
  }
}

/** The baseline server: holds every request open as an event stream and sends nothing. */
function runBare() {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('retry: 2000\n\n');
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'service') await runService(process.argv[3]);
  else if (process.argv[2] === 'bare') runBare();
  else {
    const r = await benchEventStream((process.argv[2] as 'PGlite' | 'PostgreSQL') ?? 'PGlite');
    console.log(JSON.stringify(r, null, 2));
  }
}
