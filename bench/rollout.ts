// A release rollout over 2,000 RUNNING nodes of Scale users on the in-memory runtime: every
// runtime operation takes no time, so the figure is the control plane's own work per upgrade
// (rollout passes, batches of builds, jobs, events, health probe over a socket). Baseline, in the same run
// and database: one UPDATE per node, the least any upgrade bookkeeping could cost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPglite, openPostgres, type Database, type Queryable } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { insertRelease } from '../src/db/releases.ts';
import { ReleaseService } from '../src/releases/service.ts';
import { rolloutPassJob } from '../src/nodes/rollout/pass-job.ts';
import { JobWorker } from '../src/jobs/worker.ts';
import { buildJobs } from '../src/nodes/builds/build-jobs.ts';
import { createLogger } from '../src/logger.ts';
import { InMemoryRuntimeForTests } from '../src/runtime/in-memory-for-tests.ts';
import { RlnClient } from '../src/rln/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { seedOwners } from './seed.ts';

export interface RolloutFigures {
  nodes: number;
  upgradesPerSecond: number;
  statementsPerUpgrade: number;
  baselineUpdatesPerSecond: number;
  seconds: number;
}

/** Counts every statement sent, inside transactions too. */
function countStatements(db: Database) {
  const counter = { n: 0 };
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => (counter.n++, q.query(sql, params)),
    exec: (sql) => (counter.n++, q.exec(sql)),
    signalAfterCommit: (signal) => q.signalAfterCommit(signal),
  });
  const counted: Database = {
    kind: db.kind,
    commitSignals: db.commitSignals,
    ...wrap(db),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    close: () => db.close(),
  };
  return { db: counted, counter };
}

async function seed(db: Database, users: number, nodesPerUser: number) {
  await insertRelease(db, 'bench-v1');
  await seedOwners(db, users, 'scale');
  await db.query(
    `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, rest_port, peer_port)
     SELECT md5('node' || g), 'u' || (1 + (g - 1) / $2::int), 'n' || g, 'regtest', 'RUNNING', 'running', 'bench-v1', 10000 + g * 2, 10001 + g * 2
     FROM generate_series(1, $1::int * $2::int) g`,
    [users, nodesPerUser],
  );
  await db.query(
    `INSERT INTO builds (node_id, build_number, action, status, image_version, finished_at)
     SELECT id, 1, 'create', 'SUCCESS', 'bench-v1', now() FROM nodes`,
  );
}

// The same PostgreSQL server over TCP loopback and over its Unix socket: on one machine the socket
// saves a large share of every round trip, and an upgrade is ~10 round trips.
/** Builds here only ask the in-memory runtime's health endpoint whether a daemon answers. */
const RLN_BENCH_LIMITS = { timeoutMs: 5_000, maxRequestBytes: 64 * 1024, maxResponseBytes: 1024 * 1024 };

export const ROLLOUT_DATABASES = {
  PGlite: undefined,
  'PostgreSQL (TCP 127.0.0.1)': 'postgres://postgres@127.0.0.1:5432/postgres',
  'PostgreSQL (Unix socket)': 'postgres://postgres@%2Fvar%2Frun%2Fpostgresql/postgres',
} as const;
export type RolloutDatabase = keyof typeof ROLLOUT_DATABASES;

export async function benchRollout(database: RolloutDatabase, nodes = 2000): Promise<RolloutFigures> {
  const url = ROLLOUT_DATABASES[database];
  if (url) process.env.TEST_DATABASE_URL = url;
  else delete process.env.TEST_DATABASE_URL;
  const target = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-rollout-'));
  const raw = target.url ? await openPostgres(target.url) : await openPglite(join(dataDir, 'pglite'));
  const runtime = await new InMemoryRuntimeForTests().listen();
  let worker: JobWorker | undefined;
  try {
    await migrate(raw);
    await seed(raw, nodes / 20, 20);
    const { db, counter } = countStatements(raw);
    const log = createLogger('silent');
    for (const ids of await raw.query<{ id: string }>('SELECT id FROM nodes')) await runtime.start({ nodeId: ids.id, network: 'regtest', imageVersion: 'bench-v1', restPort: 0, peerPort: 0 });
    const releases = new ReleaseService(db, { concurrency: 32, failureBudget: 10 });
    const builds = { db, runtime, nodeStartTimeoutMs: 10_000, rln: new RlnClient(RLN_BENCH_LIMITS), log };
    worker = new JobWorker({
      db,
      definitions: [...buildJobs(builds), rolloutPassJob({ db, log })],
      concurrency: 16,
      pollIntervalMs: 50,
      log,
    });
    worker.start();

    const started = performance.now();
    await releases.publish('bench-v2');
    for (;;) {
      const s = await raw.query<{ state: string }>(`SELECT state FROM rollouts WHERE version = 'bench-v2'`);
      if (s[0]?.state !== 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const statements = counter.n;
    const upgraded = Number((await raw.query<{ n: number }>(`SELECT count(*)::int AS n FROM nodes WHERE image_version = 'bench-v2'`))[0]!.n);
    if (upgraded !== nodes) {
      const status = await releases.status('bench-v2');
      const errors = await raw.query(`SELECT error, count(*)::int AS n FROM rollout_nodes WHERE version = 'bench-v2' AND error IS NOT NULL GROUP BY error LIMIT 3`);
      throw new Error(`only ${upgraded} of ${nodes} nodes were upgraded: ${JSON.stringify({ status, errors })}`);
    }
    await worker.stop();
    worker = undefined;

    const baselineStart = performance.now();
    const ids = await raw.query<{ id: string }>('SELECT id FROM nodes');
    for (const { id } of ids) await raw.query(`UPDATE nodes SET image_version = 'bench-v1', updated_at = now() WHERE id = $1`, [id]);
    const baselineSeconds = (performance.now() - baselineStart) / 1000;

    return {
      nodes,
      seconds,
      upgradesPerSecond: nodes / seconds,
      statementsPerUpgrade: statements / nodes,
      baselineUpdatesPerSecond: ids.length / baselineSeconds,
    };
  } finally {
    await worker?.stop();
    await runtime.shutdown();
    await raw.close();
    await target.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const database of Object.keys(ROLLOUT_DATABASES) as RolloutDatabase[]) {
    console.log(database, await benchRollout(database, Number(process.env.BENCH_NODES ?? 2000)));
  }
}
