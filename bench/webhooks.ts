// Signed webhook deliveries per second to a loopback receiver (fan-out, claim, sign, POST, record,
// all through the real dispatcher and database), beside the same POSTs sent without the database,
// and the cost of one Ed25519 signature.
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openPglite, openPostgres, type Database, type Queryable } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createLogger } from '../src/logger.ts';
import { recordNodeEvent } from '../src/db/node-events.ts';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.ts';
import { WebhookSender } from '../src/webhooks/send-webhook.ts';
import { serializeEnvelope } from '../src/webhooks/envelope.ts';
import { WebhookKeyring } from '../src/webhooks/signing-keys.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { insertOwnerUser } from '../test/helpers/database.ts';

export interface WebhookFigures {
  deliveriesPerSecond: number;
  /**
   * The same POSTs without the database: the same envelopes, signed the same way, same client and
   * concurrency; the faster of the two ways below.
   */
  baselinePostsPerSecond: number;
  /** The two ways of making them: signed while earlier POSTs are under way, or in the POST's slot. */
  signedAheadPostsPerSecond: number;
  signedInSlotPostsPerSecond: number;
  /** The same POSTs again, unsigned: what the signatures cost on this machine. */
  unsignedPostsPerSecond: number;
  /** This process's CPU (main thread and thread pool) per delivery, and per signed baseline POST. */
  cpuMicrosPerDelivery: number;
  cpuMicrosPerBaselinePost: number;
  /** Of which this process's main thread (the event loop; signatures are made beside it). */
  mainThreadMicrosPerDelivery: number;
  mainThreadMicrosPerBaselinePost: number;
  /** CPU of the PostgreSQL backends serving the dispatcher, per delivery (PostgreSQL only). */
  databaseCpuMicrosPerDelivery?: number;
  events: number;
  nodes: number;
  /** Statements the dispatcher sent per delivery (fan-out, claim, settle; BEGIN/COMMIT not counted). */
  statementsPerDelivery: number;
  /** Transactions it opened per delivery (each a BEGIN and a COMMIT round trip more on PostgreSQL). */
  transactionsPerDelivery: number;
}

const CONCURRENCY = 32;
export const timing: Record<string, { n: number; ms: number; rows: number }> = {};
/** The aim: deliveries at least half as fast as the bare POSTs on PostgreSQL. */
export const WEBHOOK_RATIO_AIM = 0.5;

/** Counts the statements and transactions the dispatcher sends, inside transactions too. */
function countStatements(db: Database) {
  const counter = { statements: 0, transactions: 0 };
  const wrap = (q: Queryable): Queryable => ({
    query: async <T,>(sql: string, params?: unknown[]) => {
      counter.statements++;
      if (!process.env.BENCH_TIME_STATEMENTS) return q.query<T>(sql, params);
      const t = performance.now();
      const r = await q.query<T>(sql, params);
      const k = sql.slice(0, 40).replace(/\s+/g, ' ');
      const e = (timing[k] ??= { n: 0, ms: 0, rows: 0 });
      e.n++; e.ms += performance.now() - t; e.rows += r.length;
      return r;
    },
    exec: (sql) => (counter.statements++, q.exec(sql)),
    signalAfterCommit: (signal) => q.signalAfterCommit(signal),
  });
  const counted: Database = {
    kind: db.kind,
    commitSignals: db.commitSignals,
    ...wrap(db),
    transaction: (fn) => (counter.transactions++, db.transaction((tx) => fn(wrap(tx)))),
    close: () => db.close(),
  };
  return { db: counted, counter };
}

/** A loopback webhook receiver that only counts what it gets (also used by bench/replicas.ts). */
export async function startCountingReceiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    count: () => count,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** CPU microseconds of this process's main thread so far (Linux: its schedstat). */
const mainThreadMicros = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;

const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** CPU time so far of each server process serving this database (Linux: /proc/<pid>/schedstat, ns). */
async function backendCpuNanos(db: Queryable): Promise<Map<number, number>> {
  const pids = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
  const used = new Map<number, number>();
  for (const { pid } of pids) {
    try {
      used.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // Gone meanwhile (or not on this machine): it served nothing more.
    }
  }
  return used;
}

/** CPU nanoseconds the database's server processes used since `before` (new ones count whole). */
async function backendCpuSince(db: Queryable, before: Map<number, number>) {
  let total = 0;
  for (const [pid, ns] of await backendCpuNanos(db)) total += ns - (before.get(pid) ?? 0);
  return total;
}

interface PreparedPost {
  headers: Record<string, string>;
  body: string;
}

/**
 * `count` POSTs, CONCURRENCY at a time through one sender, per second. Each is prepared (built and
 * signed) `ahead` POSTs before its own starts: CONCURRENCY, as the dispatcher signs the deliveries
 * waiting for a slot, or 0, signed in its slot.
 */
async function postsPerSecond(count: number, url: string, prepare: (i: number) => Promise<PreparedPost>, ahead = CONCURRENCY) {
  const sender = new WebhookSender({ timeoutMs: 15_000, allowPrivateTargets: true });
  const prepared: Array<Promise<PreparedPost>> = [];
  const prepareUpTo = (end: number) => {
    for (let j = prepared.length; j < Math.min(end, count); j++) prepared.push(prepare(j));
  };
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        prepareUpTo(i + 1 + ahead);
        const { headers, body } = await prepared[i]!;
        await sender.send(url, headers, body);
      }
    }),
  );
  const perSecond = count / ((performance.now() - t0) / 1000);
  sender.close();
  return perSecond;
}

export async function benchWebhooks(database: 'PGlite' | 'PostgreSQL', events = 4000, nodes = 100): Promise<WebhookFigures> {
  if (database === 'PostgreSQL') process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  else delete process.env.TEST_DATABASE_URL;
  const target = await createTestDatabase();
  const db = target.url ? await openPostgres(target.url, 20) : await openPglite(undefined);
  const dir = mkdtempSync(join(tmpdir(), 'rln-bench-webhooks-'));
  const receiver = await startCountingReceiver();
  try {
    await migrate(db);
    await db.query(`INSERT INTO image_versions (version) VALUES ('bench')`);
    await insertOwnerUser(db, 'u', 'bench@example.com', 'starter');
    const nodeRows: Array<{ id: string; userId: string }> = [];
    for (let i = 0; i < nodes; i++) {
      const id = i.toString(16).padStart(32, '0');
      await db.query(
        `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings, rest_port, peer_port)
         VALUES ($1, 'u', $2, 'regtest', 'RUNNING', 'running', 'bench', $3, $4, $5)`,
        [id, `n${i}`, JSON.stringify({ webhookUrl: receiver.url }), 20000 + 2 * i, 20001 + 2 * i],
      );
      nodeRows.push({ id, userId: 'u' });
    }
    for (let i = 0; i < events; i += 200) {
      await db.transaction(async (tx) => {
        for (let j = i; j < Math.min(events, i + 200); j++) await recordNodeEvent(tx, nodeRows[j % nodes]!, 'TEST', { n: j });
      });
    }
    const keyring = new WebhookKeyring(join(dir, 'keys.json'), 0);
    keyring.ensure();

    // Baseline: the same POSTs without the database. Each is built as a delivery builds it (the
    // event's envelope, signed by the same keyring on the thread pool) and sent through the same
    // client at the same concurrency, so the ratio is what the database's part of a delivery costs.
    const payloads = (await db.query<{ payload: Record<string, unknown> | string }>(`SELECT payload FROM node_events ORDER BY id`)).map(
      (r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as Record<string, unknown>,
    );
    const signed = async (i: number): Promise<PreparedPost> => {
      const body = serializeEnvelope(payloads[i]!);
      const timestamp = Math.floor(Date.now() / 1000);
      const id = `evt_${i}`;
      // Both schemes, as a delivery signs (Standard Webhooks and X-ThunderStack-Signature).
      const signatures = await keyring.signedHeaders(id, timestamp, body);
      return { headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), ...signatures }, body };
    };
    const unsigned = async (i: number): Promise<PreparedPost> => ({ headers: { 'webhook-id': `evt_${i}` }, body: serializeEnvelope(payloads[i]!) });
    const unsignedPostsPerSecond = await postsPerSecond(events, receiver.url, unsigned);
    // Signed ahead, as the dispatcher does, and signed in the slot; the faster is the baseline.
    const signedPosts = async (ahead: number) => {
      const cpu = process.cpuUsage();
      const main = mainThreadMicros();
      const perSecond = await postsPerSecond(events, receiver.url, signed, ahead);
      return { perSecond, cpuMicros: cpuMicros(cpu) / events, mainThreadMicros: (mainThreadMicros() - main) / events };
    };
    const signedAhead = await signedPosts(CONCURRENCY);
    const signedInSlot = await signedPosts(0);
    const baseline = signedAhead.perSecond >= signedInSlot.perSecond ? signedAhead : signedInSlot;
    const baselinePostsPerSecond = baseline.perSecond;
    const cpuMicrosPerBaselinePost = baseline.cpuMicros;
    const mainThreadMicrosPerBaselinePost = baseline.mainThreadMicros;

    const before = receiver.count();
    const counted = countStatements(db);
    const dispatcher = new WebhookDispatcher({
      db: counted.db,
      sender: new WebhookSender({ timeoutMs: 15_000, allowPrivateTargets: true }),
      keyring,
      retryScheduleMs: [0],
      timeoutMs: 15_000,
      concurrency: CONCURRENCY,
      pollIntervalMs: 50,
      log: createLogger('silent'),
    });
    const backends0 = target.url ? await backendCpuNanos(db) : undefined;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadMicros();
    dispatcher.start();
    while (receiver.count() - before < events) await new Promise((r) => setTimeout(r, 5));
    const deliveriesPerSecond = events / ((performance.now() - t0) / 1000);
    const cpuMicrosPerDelivery = cpuMicros(cpu0) / events;
    const mainThreadMicrosPerDelivery = (mainThreadMicros() - main0) / events;
    const databaseCpuMicrosPerDelivery = backends0 && (await backendCpuSince(db, backends0)) / 1000 / events;
    const { statements, transactions } = counted.counter;
    await dispatcher.stop();
    return {
      deliveriesPerSecond,
      baselinePostsPerSecond,
      signedAheadPostsPerSecond: signedAhead.perSecond,
      signedInSlotPostsPerSecond: signedInSlot.perSecond,
      unsignedPostsPerSecond,
      cpuMicrosPerDelivery,
      cpuMicrosPerBaselinePost,
      mainThreadMicrosPerDelivery,
      mainThreadMicrosPerBaselinePost,
      databaseCpuMicrosPerDelivery,
      events,
      nodes,
      statementsPerDelivery: statements / events,
      transactionsPerDelivery: transactions / events,
    };
  } finally {
    await receiver.close();
    await db.close();
    await target.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One signature, awaited (it is made on the thread pool): the time a delivery waits for it. */
export async function benchSignature(iterations = 20_000) {
  const dir = mkdtempSync(join(tmpdir(), 'rln-bench-sign-'));
  try {
    const keyring = new WebhookKeyring(join(dir, 'keys.json'), 0);
    keyring.ensure();
    const body = JSON.stringify({ eventType: 'NODE_STATUS_UPDATED', eventTimestamp: new Date().toISOString(), nodeId: 'a'.repeat(32), details: { nodeId: 'a'.repeat(32), status: 'RUNNING' } });
    for (let i = 0; i < 1000; i++) await keyring.signatureHeader('evt_warm', i, body);
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) await keyring.signatureHeader('evt_1', i, body);
    const ms = performance.now() - t0;
    return { microseconds: (ms * 1000) / iterations, perSecond: iterations / (ms / 1000) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Alone: `node --import tsx bench/webhooks.ts [PGlite|PostgreSQL ...]` (BENCH_WEBHOOK_RUNS=n repeats).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const which = process.argv.slice(2).length ? process.argv.slice(2) : ['PGlite', 'PostgreSQL'];
  const runs = Number(process.env.BENCH_WEBHOOK_RUNS ?? 1);
  for (let run = 0; run < runs; run++) {
    for (const database of which as Array<'PGlite' | 'PostgreSQL'>) {
      const w = await benchWebhooks(database);
      const ratio = w.deliveriesPerSecond / w.baselinePostsPerSecond;
      console.log(
        `${database}: ${w.deliveriesPerSecond.toFixed(1)} deliveries/s, baseline ${w.baselinePostsPerSecond.toFixed(1)} signed POSTs/s ` +
          `(signed ahead ${w.signedAheadPostsPerSecond.toFixed(1)}, in the slot ${w.signedInSlotPostsPerSecond.toFixed(1)}) ` +
          `(${w.unsignedPostsPerSecond.toFixed(1)} unsigned, ratio ${(w.deliveriesPerSecond / w.unsignedPostsPerSecond).toFixed(2)}), ` +
          `ratio ${ratio.toFixed(2)} (aim on PostgreSQL >= ${WEBHOOK_RATIO_AIM}: ${ratio >= WEBHOOK_RATIO_AIM ? 'met' : 'missed'}), ` +
          `${w.statementsPerDelivery.toFixed(3)} statements and ${w.transactionsPerDelivery.toFixed(3)} transactions per delivery, ` +
          `CPU µs per delivery: service ${w.cpuMicrosPerDelivery.toFixed(0)} (per baseline POST ${w.cpuMicrosPerBaselinePost.toFixed(0)}), ` +
          `main thread ${w.mainThreadMicrosPerDelivery.toFixed(0)} (per baseline POST ${w.mainThreadMicrosPerBaselinePost.toFixed(0)}), database ${w.databaseCpuMicrosPerDelivery?.toFixed(0) ?? '-'}`,
      );
    }
  }
}
