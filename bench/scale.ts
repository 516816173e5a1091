// The control plane at 100, 1,000 and 10,000 nodes on PostgreSQL (`npm run bench -- scale`). The
// fleet grows in one database, most nodes PAUSED and a tenth RUNNING, in accounts of 100 nodes on
// the Scale plan; at each size the whole service (bench/scale-service.ts: API, workers, reconcile
// loop, gateways) is started again in a process of its own on the in-memory runtime, which starts
// no daemons, so what is measured is what the fleet costs the control plane itself:
//   - the service's RSS at rest, and the database's size;
//   - one reconcile pass (the mean over the passes of a few seconds, from the service's metric);
//   - GET /api/nodes?limit=100 and GET /api/nodes/{id} p99 while the fleet works (another account's
//     nodes are stopped and started meanwhile), at the rates a fleet of 10,000 sends and saturated;
//   - creating nodes: POST /api/nodes answers per second, 16 at a time;
//   - a bad release first, which must pause with at most its failure budget + 1 upgrades failed;
//     then a release rolled out to every node (all on an automatically upgrading plan): RUNNING
//     nodes upgraded per second, PAUSED ones deferred to their next start as always.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openPostgres, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { insertRelease } from '../src/db/releases.ts';
import { AccountService } from '../src/accounts/service.ts';
import { ReleaseService } from '../src/releases/service.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { repoRoot } from '../test/helpers/service-process.ts';
import { keepAliveGetter } from './http-client.ts';
import { runAtRate, runLoad, type LoadResult } from './load.ts';
import { idleRssMb } from './rss.ts';
import { npmStartFlags } from './startup.ts';

export const SCALE_SIZES = (process.env.BENCH_SCALE_SIZES ?? '100,1000,10000').split(',').map(Number);
const NODES_PER_ACCOUNT = 100;
const RUNNING_EVERY = 10;
const CREATIONS = Number(process.env.BENCH_SCALE_CREATIONS ?? 500);
const LOAD_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
export const LIST_RATE = 20;
export const GET_RATE = 200;
// A fleet's rollout runs hundreds of upgrades at once: the failure budget, not the concurrency,
// bounds what a bad release breaks (nodes/rollout/rollout.ts, inFlightLimit), measured below too.
const ROLLOUT_CONCURRENCY = Number(process.env.BENCH_ROLLOUT_CONCURRENCY ?? 250);
const FAILURE_BUDGET = 10;

export interface ScaleFigures {
  nodes: number;
  rssMb: number;
  /** V8's heap in use at rest (the process metric). */
  heapUsedMb: number;
  /** pg_database_size when the size is reached (before the round's creations and rollout). */
  databaseMb: number;
  reconcilePassMs: number;
  /** GET /api/nodes?limit=100 and GET /api/nodes/{id} at LIST_RATE and GET_RATE a second. */
  listAtRate: LoadResult;
  oneAtRate: LoadResult;
  /** The service's own event loop delay over each of those two runs (p99 and max, ms). */
  listAtRateLoopDelay: LoopDelay;
  oneAtRateLoopDelay: LoopDelay;
  /** The same by 4 callers asking as fast as answered: the 2 cores' throughput, and latency when saturated. */
  listSaturated: LoadResult;
  oneSaturated: LoadResult;
  createsPerSecond: number;
  upgradesPerSecond: number;
  upgraded: number;
  rolloutState: string;
  /** A bad release (its version never comes up) rolled out next: how many upgrades failed before it paused. */
  badReleaseFailed: number;
  badReleaseState: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Grows the fleet to `to` nodes (from `from`): owners and accounts as needed (u0 is the account
 * whose nodes are started and stopped while the reads are measured, u1 the reader's, with 100
 * nodes), three builds per node.
 */
async function grow(db: Database, from: number, to: number) {
  const accounts = Math.ceil(to / NODES_PER_ACCOUNT);
  await db.query(`INSERT INTO users (id, email) SELECT 'u' || g, 'bench' || g || '@example.com' FROM generate_series(0, $1::int) g ON CONFLICT DO NOTHING`, [accounts]);
  await db.query(`INSERT INTO accounts (id, plan) SELECT 'u' || g, 'scale' FROM generate_series(0, $1::int) g ON CONFLICT DO NOTHING`, [accounts]);
  await db.query(`INSERT INTO account_members (account_id, user_id, role) SELECT 'u' || g, 'u' || g, 'owner' FROM generate_series(0, $1::int) g ON CONFLICT DO NOTHING`, [accounts]);
  if (from === 0) {
    await db.query(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, locked, image_version, rest_port, peer_port)
       SELECT md5('churn' || g), 'u0', 'c' || g, 'regtest', 'PAUSED', 'stopped', true, (SELECT version FROM image_versions ORDER BY seq DESC LIMIT 1), NULL, NULL
       FROM generate_series(1, 8) g`,
    );
  }
  await db.query(
    `INSERT INTO nodes (id, user_id, name, network, status, desired_state, locked, image_version, rest_port, peer_port, created_at)
     SELECT md5('node' || g), 'u' || (1 + (g - 1) / $3::int), 'n' || g, 'regtest',
            CASE WHEN g % $4::int = 0 THEN 'RUNNING' ELSE 'PAUSED' END, CASE WHEN g % $4::int = 0 THEN 'running' ELSE 'stopped' END,
            true, (SELECT version FROM image_versions ORDER BY seq DESC LIMIT 1), NULL, NULL, now() - make_interval(secs => $2::int - g)
     FROM generate_series($1::int + 1, $2::int) g`,
    [from, to, NODES_PER_ACCOUNT, RUNNING_EVERY],
  );
  await db.query(
    `INSERT INTO builds (node_id, build_number, action, status, image_version, finished_at)
     SELECT n.id, b, CASE b WHEN 1 THEN 'create' WHEN 2 THEN 'stop' ELSE 'start' END, 'SUCCESS', n.image_version, now()
     FROM nodes n CROSS JOIN generate_series(1, 3) b WHERE NOT EXISTS (SELECT 1 FROM builds x WHERE x.node_id = n.id)`,
  );
  await db.query('ANALYZE');
}

export interface Service {
  child: ChildProcess;
  api: string;
  metrics: string;
  stop(): Promise<void>;
}

/**
 * The service in a process of its own. Diagnostics: BENCH_CPU_PROF=<dir> writes its CPU profile
 * there when it stops; BENCH_SHOW_STDERR=1 passes its standard error through.
 */
export async function startService(url: string, dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const [apiPort, nodeApiPort, mtlsPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  // With npm start's flags: its young generation's size sets how long each minor collection stalls.
  const child = spawn(process.execPath, [...npmStartFlags(), ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_CPU_PROF] : []), '--import', 'tsx', join(repoRoot, 'bench/scale-service.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: url,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      NODE_API_PORT: String(nodeApiPort),
      MTLS_PORT: String(mtlsPort),
      METRICS_PORT: String(metricsPort),
      NODE_PORT_RANGE: randomNodePortRange(),
      BOOTSTRAP_DEV_USER: 'false',
      LOG_LEVEL: 'silent',
      API_RATE_LIMIT_PER_MINUTE: '0',
      API_USER_RATE_LIMIT_PER_MINUTE: '0',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
      JOB_CONCURRENCY: '16',
      JOB_POLL_INTERVAL_MS: '50',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr += d; if (process.env.BENCH_SHOW_STDERR) process.stderr.write(d); });
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => line === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`the service exited (${code}): ${stderr.slice(-1500)}`)));
  });
  return {
    child,
    api: `http://127.0.0.1:${apiPort}`,
    metrics: `http://127.0.0.1:${metricsPort}/metrics`,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

interface LoopDelay {
  p99Ms: number;
  maxMs: number;
}

/**
 * The service's event loop delay since the last scrape (prom-client resets its histogram on each):
 * what of a latency is the service's own stalls rather than the machine's or the load generator's.
 */
async function loopDelaySinceLastScrape(metricsUrl: string): Promise<LoopDelay> {
  const text = await (await fetch(metricsUrl)).text();
  const ms = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99Ms: ms('rlncloud_nodejs_eventloop_lag_p99_seconds'), maxMs: ms('rlncloud_nodejs_eventloop_lag_max_seconds') };
}

/** The reconcile metric's sum and count (seconds, passes). */
async function reconcileTotals(metricsUrl: string) {
  const text = await (await fetch(metricsUrl)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { sum: value('rlncloud_reconcile_pass_seconds_sum'), count: value('rlncloud_reconcile_pass_seconds_count') };
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function measureSize(db: Database, url: string, nodes: number, round: number): Promise<ScaleFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-scale-'));
  const [size] = await db.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
  const databaseMb = Number(size!.bytes) / 2 ** 20;
  const service = await startService(url, dataDir);
  try {
    // The first pass finds every RUNNING node's daemon missing from the fresh runtime and starts it
    // (what a restarted service does); the figures are taken once the passes are routine.
    // The default RECONCILE_INTERVAL_MS (5 s), as a fleet runs: passes are measured over ~11 s.
    await waitFor('two reconcile passes', async () => (await reconcileTotals(service.metrics)).count >= 2);
    const rssMb = await idleRssMb(service.child.pid!);
    // What the process holds (RSS keeps the high-water mark of the first pass's restarts).
    const heapUsedMb = Number(/^rlncloud_nodejs_heap_size_used_bytes (\S+)$/m.exec(await (await fetch(service.metrics)).text())?.[1] ?? NaN) / 2 ** 20;
    const before = await reconcileTotals(service.metrics);
    await sleep(11_000);
    const after = await reconcileTotals(service.metrics);
    const reconcilePassMs = ((after.sum - before.sum) / Math.max(1, after.count - before.count)) * 1000;

    const accounts = new AccountService(db);
    const reader = (await accounts.createToken('bench1@example.com', `reader-${round}`)).token;
    const worker = (await accounts.createToken('bench0@example.com', `worker-${round}`)).token;
    const auth = { authorization: `Bearer ${reader}` };
    const ownNode = (await db.query<{ id: string }>(`SELECT id FROM nodes WHERE user_id = 'u1' ORDER BY created_at LIMIT 1`))[0]!.id;
    const churned = (await db.query<{ id: string }>(`SELECT id FROM nodes WHERE user_id = 'u0' ORDER BY created_at LIMIT 8`)).map((r) => r.id);

    // The fleet works meanwhile: another account's nodes started and stopped over and over.
    const churn = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench/scale-churn.ts'), service.api, worker, ...churned], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let churnCalls = '';
    churn.stdout!.on('data', (d) => (churnCalls += d));
    await sleep(1000); // its first calls are under way
    const get = keepAliveGetter(service.api, auth, 16);
    const expectOk = (path: string) => async () => {
      const status = await get(path);
      if (status !== 200) throw new Error(`GET ${path} answered ${status}`);
    };
    const listPath = '/api/nodes?limit=100';
    const onePath = `/api/nodes/${ownNode}`;
    // Warmed up first: what is measured is a service that has answered these before.
    await runLoad(expectOk(listPath), { concurrency: 4, durationMs: 1000 });
    await runLoad(expectOk(onePath), { concurrency: 4, durationMs: 1000 });
    // At the rates a fleet of 10,000 sends (the aims' figures): its 100 accounts each reading their
    // list every 5 s, and its 1,000 running nodes' wallets each asking for their node every 5 s.
    await loopDelaySinceLastScrape(service.metrics);
    const listAtRate = await runAtRate(expectOk(listPath), { perSecond: LIST_RATE, durationMs: LOAD_MS });
    const listAtRateLoopDelay = await loopDelaySinceLastScrape(service.metrics);
    const oneAtRate = await runAtRate(expectOk(onePath), { perSecond: GET_RATE, durationMs: LOAD_MS });
    const oneAtRateLoopDelay = await loopDelaySinceLastScrape(service.metrics);
    // And saturated: 4 callers, each asking again as soon as answered, take the 2 cores.
    const list = await runLoad(expectOk(listPath), { concurrency: 4, durationMs: LOAD_MS });
    const one = await runLoad(expectOk(onePath), { concurrency: 4, durationMs: LOAD_MS });
    churn.kill('SIGTERM');
    await new Promise((r) => churn.once('exit', r));
    if (!(Number(churnCalls) > 0)) throw new Error('the churn made no calls while the reads were measured');

    // Creations: into accounts of their own, 16 at a time.
    const creators = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const email = `creator-${round}-${i}@example.com`;
        await accounts.createUser({ email, plan: 'scale' });
        return (await accounts.createToken(email, 'bench')).token;
      }),
    );
    let next = 0;
    let created = 0;
    const createStarted = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async (_, caller) => {
        while (next < CREATIONS) {
          const i = next++;
          const r = await fetch(`${service.api}/api/nodes`, {
            method: 'POST',
            headers: { authorization: `Bearer ${creators[caller % creators.length]}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `created-${i}`, network: 'regtest' }),
          });
          await r.arrayBuffer();
          if (r.status === 200) created++;
        }
      }),
    );
    const createsPerSecond = created / ((performance.now() - createStarted) / 1000);
    await waitFor('the created nodes to run', async () => {
      const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM builds WHERE status = 'IN_PROGRESS'`);
      return Number(row!.n) === 0;
    });

    const releases = new ReleaseService(db, { concurrency: ROLLOUT_CONCURRENCY, failureBudget: FAILURE_BUDGET });
    // First a release whose version never comes up (the in-memory runtime's `fail-` versions): the
    // rollout must pause with no more than the budget + 1 failed, every one rolled back. It goes
    // first so that the good release after it is the latest: new nodes of the next size are
    // created on a version that runs, and its rollout overtakes this paused one.
    const bad = `fail-scale-v${round + 2}`;
    await releases.publish(bad);
    let badState = 'running';
    await waitFor('the bad rollout to stop', async () => {
      const status = await releases.status(bad);
      badState = status.state;
      return status.state !== 'running' && status.nodes.upgrading === 0;
    }, 120_000);
    const badReleaseFailed = (await releases.status(bad)).nodes.failed;

    // A release to every node: RUNNING ones upgraded now, PAUSED ones at their next start.
    const version = `scale-v${round + 2}`;
    const rolloutStarted = performance.now();
    await releases.publish(version);
    let state = 'running';
    await waitFor('the rollout', async () => {
      state = (await db.query<{ state: string }>('SELECT state FROM rollouts WHERE version = $1', [version]))[0]?.state ?? 'running';
      return state !== 'running';
    }, 600_000);
    const seconds = (performance.now() - rolloutStarted) / 1000;
    const [upgradedRow] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM nodes WHERE image_version = $1 AND status = 'RUNNING'`, [version]);
    const upgraded = Number(upgradedRow!.n);
    return {
      nodes,
      rssMb,
      heapUsedMb,
      databaseMb,
      reconcilePassMs,
      listAtRate,
      oneAtRate,
      listAtRateLoopDelay,
      oneAtRateLoopDelay,
      listSaturated: list,
      oneSaturated: one,
      createsPerSecond,
      upgradesPerSecond: upgraded / seconds,
      upgraded,
      rolloutState: state,
      badReleaseFailed,
      badReleaseState: badState,
    };
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Grows one PostgreSQL database through `sizes` and measures the service at each. */
export async function benchScale(sizes = SCALE_SIZES): Promise<ScaleFigures[]> {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const target = await createTestDatabase();
  const db = await openPostgres(target.url!);
  const figures: ScaleFigures[] = [];
  try {
    await migrate(db);
    await insertRelease(db, 'scale-v1');
    let count = 0;
    for (const [round, size] of sizes.entries()) {
      // Nodes created by the previous round count towards this size.
      const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM nodes`);
      count = Number(row!.n);
      if (size > count) await grow(db, count, size);
      figures.push(await measureSize(db, target.url!, Math.max(size, count), round));
    }
    return figures;
  } finally {
    await db.close();
    await target.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await benchScale()) console.log(f);
}
