// Does a second replica add throughput, or only contention? The same work on one PostgreSQL
// database, carried out by one and then by two replica processes (each its own Node process, its
// own pool, its own workers, as separate pods would be): a release rollout (build workers and
// rollout passes on the in-memory runtime) and signed webhook deliveries to a loopback receiver.
// The figure is the ratio two / one, measured in the same run.
//
//   node --import tsx bench/replicas.ts            both, one and two replicas
//   (a replica is this file run with `replica <mode> <database-url> [receiver-url]`)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openPostgres, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { insertRelease } from '../src/db/releases.ts';
import { recordNodeEvent } from '../src/db/node-events.ts';
import { ReleaseService } from '../src/releases/service.ts';
import { rolloutPassJob } from '../src/nodes/rollout/pass-job.ts';
import { JobWorker } from '../src/jobs/worker.ts';
import { buildJobs } from '../src/nodes/builds/build-jobs.ts';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.ts';
import { WebhookSender } from '../src/webhooks/send-webhook.ts';
import { WebhookKeyring } from '../src/webhooks/signing-keys.ts';
import { createLogger } from '../src/logger.ts';
import { InMemoryRuntimeForTests } from '../src/runtime/in-memory-for-tests.ts';
import { RlnClient } from '../src/rln/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { startCountingReceiver } from './webhooks.ts';
import { seedOwners } from './seed.ts';
import { insertOwnerUser } from '../test/helpers/database.ts';

type Mode = 'rollout' | 'webhooks';

/** Builds here only ask the in-memory runtime's health endpoint whether a daemon answers. */
const RLN_BENCH_LIMITS = { timeoutMs: 5_000, maxRequestBytes: 64 * 1024, maxResponseBytes: 1024 * 1024 };

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROLLOUT_NODES = Number(process.env.BENCH_REPLICA_ROLLOUT_NODES ?? 1000);
const WEBHOOK_EVENTS = Number(process.env.BENCH_REPLICA_WEBHOOK_EVENTS ?? 4000);
const WEBHOOK_NODES = 100;

export interface ReplicaFigures {
  mode: Mode;
  replicas: number;
  items: number;
  perSecond: number;
}

/** One run: a fresh database with the work seeded, `replicas` processes doing it, the rate. */
export async function benchReplicas(mode: Mode, replicas: number): Promise<ReplicaFigures> {
  process.env.TEST_DATABASE_URL = ADMIN_URL;
  const target = await createTestDatabase();
  const db = await openPostgres(target.url!);
  const receiver = await startCountingReceiver();
  const children: ChildProcess[] = [];
  try {
    await migrate(db);
    const items = mode === 'rollout' ? await seedRollout(db, ROLLOUT_NODES) : await seedWebhookNodes(db, receiver.url);
    for (let i = 0; i < replicas; i++) children.push(await startReplica(mode, target.url!, receiver.url));
    const t0 = performance.now();
    if (mode === 'rollout') {
      await new ReleaseService(db, { concurrency: 32, failureBudget: 10 }).publish('bench-v2');
      while ((await db.query<{ state: string }>(`SELECT state FROM rollouts WHERE version = 'bench-v2'`))[0]?.state === 'running') await sleep(20);
      const upgraded = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM nodes WHERE image_version = 'bench-v2'`))[0]!.n;
      if (upgraded !== items) throw new Error(`only ${upgraded} of ${items} nodes were upgraded`);
    } else {
      await recordWebhookEvents(db, WEBHOOK_EVENTS);
      while (receiver.count() < WEBHOOK_EVENTS) await sleep(5);
    }
    const seconds = (performance.now() - t0) / 1000;
    return { mode, replicas, items: mode === 'rollout' ? items : WEBHOOK_EVENTS, perSecond: (mode === 'rollout' ? items : WEBHOOK_EVENTS) / seconds };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await receiver.close();
    await db.close();
    await target.drop();
  }
}

async function seedRollout(db: Database, nodes: number) {
  await insertRelease(db, 'bench-v1');
  const users = Math.ceil(nodes / 20);
  await seedOwners(db, users, 'scale');
  await db.query(
    `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version)
     SELECT md5('node' || g), 'u' || (1 + (g - 1) / 20), 'n' || g, 'regtest', 'RUNNING', 'running', 'bench-v1'
     FROM generate_series(1, $1::int) g`,
    [nodes],
  );
  await db.query(`INSERT INTO builds (node_id, build_number, action, status, image_version, finished_at) SELECT id, 1, 'create', 'SUCCESS', 'bench-v1', now() FROM nodes`);
  return nodes;
}

async function seedWebhookNodes(db: Database, url: string) {
  await db.query(`INSERT INTO image_versions (version) VALUES ('bench')`);
  await insertOwnerUser(db, 'u', 'bench@example.com', 'starter');
  await db.query(
    `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings)
     SELECT lpad(to_hex(g), 32, '0'), 'u', 'n' || g, 'regtest', 'RUNNING', 'running', 'bench', $2::jsonb
     FROM generate_series(0, $1::int - 1) g`,
    [WEBHOOK_NODES, JSON.stringify({ webhookUrl: url })],
  );
  return WEBHOOK_NODES;
}

async function recordWebhookEvents(db: Database, events: number) {
  const nodes = await db.query<{ id: string; userId: string }>('SELECT id, user_id AS "userId" FROM nodes ORDER BY id');
  for (let i = 0; i < events; i += 200) {
    await db.transaction(async (tx) => {
      for (let j = i; j < Math.min(events, i + 200); j++) await recordNodeEvent(tx, nodes[j % nodes.length]!, 'TEST', { n: j });
    });
  }
}

/** A replica process; resolves once it says it is working. */
function startReplica(mode: Mode, url: string, receiverUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'replica', mode, url, receiverUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`replica exited with ${code} before it was ready`)));
  });
}

/** The replica side: what a serving process runs for this kind of work, and nothing else. */
async function runReplica(mode: Mode, url: string) {
  const db = await openPostgres(url, 20);
  const log = createLogger('silent');
  const stops: Array<() => Promise<void>> = [];
  if (mode === 'rollout') {
    const runtime = await new InMemoryRuntimeForTests().listen();
    for (const { id } of await db.query<{ id: string }>('SELECT id FROM nodes')) {
      await runtime.start({ nodeId: id, network: 'regtest', imageVersion: 'bench-v1', restPort: 0, peerPort: 0 });
    }
    const worker = new JobWorker({
      db,
      definitions: [...buildJobs({ db, runtime, nodeStartTimeoutMs: 10_000, rln: new RlnClient(RLN_BENCH_LIMITS), log }), rolloutPassJob({ db, log })],
      concurrency: 16,
      pollIntervalMs: 50,
      log,
    });
    // Publish (elsewhere) runs the first pass; every later one is a rollout pass job these workers claim.
    worker.start();
    stops.push(async () => {
      await worker.stop();
      await runtime.shutdown();
    });
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'rln-bench-replica-'));
    const keyring = new WebhookKeyring(join(dir, 'keys.json'), 0);
    keyring.ensure();
    const dispatcher = new WebhookDispatcher({
      db,
      sender: new WebhookSender({ timeoutMs: 15_000, allowPrivateTargets: true }),
      keyring,
      retryScheduleMs: [0],
      timeoutMs: 15_000,
      concurrency: 32,
      pollIntervalMs: 50,
      log,
    });
    dispatcher.start();
    stops.push(async () => {
      await dispatcher.stop();
      rmSync(dir, { recursive: true, force: true });
    });
  }
  process.stdout.write('ready\n');
  await new Promise((r) => process.once('SIGTERM', r));
  for (const stop of stops) await stop();
  await db.close();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'replica') {
    await runReplica(process.argv[3] as Mode, process.argv[4]!);
  } else {
    for (const mode of ['rollout', 'webhooks'] as const) {
      const one = await benchReplicas(mode, 1);
      const two = await benchReplicas(mode, 2);
      console.log(`${mode}: one replica ${one.perSecond.toFixed(1)}/s, two ${two.perSecond.toFixed(1)}/s, two / one ${(two.perSecond / one.perSecond).toFixed(2)}`);
    }
  }
}
