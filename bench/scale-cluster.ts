// The cluster part of `npm run bench -- scale` (TEST_KUBECONFIG): the kubernetes runtime with
// 100 and 2,000 nodes on the project's test cluster, what a fleet at rest costs the service and
// the API server. One PostgreSQL database and one fresh namespace grow through the sizes; a few
// nodes RUNNING on the devnode image (the service's own reconcile pass starts them, as after a
// restore), the rest PAUSED: StatefulSets at zero replicas, applied the way the runtime applies
// them (objects.ts), in batches. At each size the service starts again (`npm start`, a process of
// its own) and is measured:
//   - watch resync: how long its three lists took at start (the service's own log line), which is
//     also what each relist costs (a watch reopened too late, 410 Gone), and start to /readyz;
//   - its RSS at rest;
//   - API-server requests over a minute at rest, from rlncloud_kubernetes_api_requests_total,
//     and from it requests per idle node per hour; the pod log streams it holds open.
// No Services for the PAUSED nodes: the test cluster's Service range (a /20) holds ~4,000
// addresses, fewer than two Services for each of 2,000 nodes.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openPostgres, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { insertRelease } from '../src/db/releases.ts';
import { statefulSet } from '../src/runtime/kubernetes/objects.ts';
import { readKubernetesConfig } from '../src/runtime/kubernetes/settings.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { parseExposition } from '../test/helpers/metrics.ts';
import { freePort } from '../test/helpers/ports.ts';
import { repoRoot } from '../test/helpers/service-process.ts';
import { idleRssMb } from './rss.ts';
import { npmStartArgs } from './startup.ts';

export const CLUSTER_SCALE_SIZES = (process.env.BENCH_CLUSTER_SIZES ?? '100,2000').split(',').map(Number);
const RUNNING = Number(process.env.BENCH_CLUSTER_RUNNING ?? 5);
/** How long the service is watched at rest: at least a minute, for a rate per minute. */
const REST_MS = Number(process.env.BENCH_CLUSTER_REST_MS ?? 60_000);
const IMAGE_VERSION = 'devnode-0.1.0';
const APPLY_BATCH = 250;
/** What the node pods ask of the test cluster's 2 CPUs (test/helpers/kubernetes.ts, SMALL_NODE_PODS). */
const SMALL_NODE_PODS = { K8S_CPU_REQUEST: '20m', K8S_MEMORY_REQUEST: '64Mi', K8S_STORAGE_SIZE: '16Mi' };

export interface ClusterScaleFigures {
  nodes: number;
  running: number;
  /** The service's three lists at start (its log line), and what they held. */
  listedSeconds: number;
  listed: { statefulSets: number; pods: number; services: number };
  /** Process start to /readyz 200 (the bundle already built). */
  readySeconds: number;
  rssMb: number;
  /** V8's heap in use at rest (the process metric): the watch caches' objects live there. */
  heapUsedMb: number;
  restSeconds: number;
  requestsPerMinute: number;
  byVerb: Record<string, number>;
  /** Requests at rest per PAUSED node per hour. */
  perIdleNodePerHour: number;
  logStreamsOpen: number;
  /** Warnings and errors the service logged meanwhile (first few). */
  warnings: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nodeId = (g: number) => createHash('md5').update(`node${g}`).digest('hex');

function kubectl(kubeconfig: string, args: string[], input?: string) {
  return execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, maxBuffer: 256 * 2 ** 20 }).toString();
}

/** Nodes `from`+1 .. `to` of one owner on the Scale plan; the first RUNNING of all are RUNNING. */
async function grow(db: Database, from: number, to: number) {
  if (from === 0) {
    await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'bench1@example.com')`);
    await db.query(`INSERT INTO accounts (id, plan) VALUES ('u1', 'scale')`);
    await db.query(`INSERT INTO account_members (account_id, user_id, role) VALUES ('u1', 'u1', 'owner')`);
  }
  await db.query(
    `INSERT INTO nodes (id, user_id, name, network, status, desired_state, locked, image_version, rest_port, peer_port)
     SELECT md5('node' || g), 'u1', 'n' || g, 'regtest', CASE WHEN g <= $3::int THEN 'RUNNING' ELSE 'PAUSED' END,
            CASE WHEN g <= $3::int THEN 'running' ELSE 'stopped' END, true, $4, NULL, NULL
     FROM generate_series($1::int + 1, $2::int) g`,
    [from, to, RUNNING, IMAGE_VERSION],
  );
  await db.query(
    `INSERT INTO builds (node_id, build_number, action, status, image_version, finished_at)
     SELECT n.id, 1, 'create', 'SUCCESS', n.image_version, now() FROM nodes n WHERE NOT EXISTS (SELECT 1 FROM builds x WHERE x.node_id = n.id)`,
  );
  await db.query('ANALYZE');
}

/** The PAUSED nodes' StatefulSets (zero replicas), as the runtime's stop leaves them. */
function applyPausedSets(kubeconfig: string, env: Record<string, string>, from: number, to: number) {
  const config = readKubernetesConfig(env, []);
  const first = Math.max(from, RUNNING) + 1;
  const items = Array.from({ length: Math.max(0, to - first + 1) }, (_, i) =>
    statefulSet(config, { nodeId: nodeId(first + i), network: 'regtest', imageVersion: IMAGE_VERSION, replicas: 0 }),
  );
  for (let i = 0; i < items.length; i += APPLY_BATCH) {
    kubectl(kubeconfig, ['apply', '--server-side', '--field-manager', 'rln-cloud', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(i, i + APPLY_BATCH) }));
  }
}

interface Service {
  child: ChildProcess;
  api: string;
  metrics: string;
  startedAt: number;
  /** Resolves with the log line saying the watch caches are filled. */
  listed: Promise<{ seconds: number; statefulSets: number; pods: number; services: number }>;
  warnings: string[];
  stop(): Promise<void>;
}

async function startService(env: Record<string, string>): Promise<Service> {
  const [apiPort, nodeApiPort, mtlsPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const startedAt = performance.now();
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...env,
      HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      NODE_API_PORT: String(nodeApiPort),
      MTLS_PORT: String(mtlsPort),
      METRICS_PORT: String(metricsPort),
      BOOTSTRAP_DEV_USER: 'false',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const warnings: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const lines = createInterface({ input: child.stdout! });
  const listed = new Promise<Service['listed'] extends Promise<infer T> ? T : never>((resolve, reject) => {
    lines.on('line', (line) => {
      let entry: { level?: number; msg?: string; seconds?: number; statefulSets?: number; pods?: number; services?: number } = {};
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === 'Kubernetes watch caches filled') resolve(entry as never);
      if ((entry.level ?? 0) >= 40 && warnings.length < 10) warnings.push(line.slice(0, 300));
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}): ${stderr}`)));
  });
  listed.catch(() => {});
  return {
    child,
    api: `http://127.0.0.1:${apiPort}`,
    metrics: `http://127.0.0.1:${metricsPort}/metrics`,
    startedAt,
    listed,
    warnings,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function scrape(url: string) {
  const { samples } = parseExposition(await (await fetch(url)).text());
  const byVerb: Record<string, number> = {};
  for (const [key, value] of samples) {
    const verb = /^rlncloud_kubernetes_api_requests_total\{verb="(\w+)"\}$/.exec(key)?.[1];
    if (verb) byVerb[verb] = value;
  }
  const heapUsedMb = (samples.get('rlncloud_nodejs_heap_size_used_bytes') ?? 0) / 2 ** 20;
  return { byVerb, logStreams: samples.get('rlncloud_node_log_streams_open') ?? 0, heapUsedMb };
}

function readyPods(kubeconfig: string, namespace: string): number {
  const pods = JSON.parse(kubectl(kubeconfig, ['-n', namespace, 'get', 'pods', '-o', 'json'])).items as any[];
  return pods.filter((p) => p.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')).length;
}

async function measure(kubeconfig: string, namespace: string, env: Record<string, string>, nodes: number): Promise<ClusterScaleFigures> {
  const service = await startService(env);
  try {
    const listed = await service.listed;
    await waitFor('/readyz', async () => (await fetch(`${service.api}/readyz`)).status === 200);
    const readySeconds = (performance.now() - service.startedAt) / 1000;
    // The RUNNING nodes up (started by the first reconcile pass on the first size) and their logs followed.
    await waitFor(`${RUNNING} node pods ready`, async () => readyPods(kubeconfig, namespace) >= RUNNING, 180_000);
    await waitFor(`${RUNNING} pod log streams`, async () => (await scrape(service.metrics)).logStreams >= RUNNING, 60_000).catch(() => {});
    await sleep(5_000);
    const before = await scrape(service.metrics);
    const restStarted = performance.now();
    await sleep(REST_MS);
    const after = await scrape(service.metrics);
    const restSeconds = (performance.now() - restStarted) / 1000;
    const rssMb = await idleRssMb(service.child.pid!);
    const byVerb = Object.fromEntries(Object.keys(after.byVerb).map((verb) => [verb, after.byVerb[verb]! - (before.byVerb[verb] ?? 0)]));
    const requests = Object.values(byVerb).reduce((a, b) => a + b, 0);
    const requestsPerMinute = requests / (restSeconds / 60);
    return {
      nodes,
      running: RUNNING,
      listedSeconds: listed.seconds,
      listed: { statefulSets: listed.statefulSets, pods: listed.pods, services: listed.services },
      readySeconds,
      rssMb,
      heapUsedMb: after.heapUsedMb,
      restSeconds,
      requestsPerMinute,
      byVerb,
      perIdleNodePerHour: (requestsPerMinute * 60) / (nodes - RUNNING),
      logStreamsOpen: after.logStreams,
      warnings: service.warnings,
    };
  } finally {
    await service.stop();
  }
}

/** Grows one database and one namespace through `sizes`, measuring the service at rest at each. */
export async function benchScaleOnCluster(kubeconfig: string, sizes = CLUSTER_SCALE_SIZES): Promise<ClusterScaleFigures[]> {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const namespace = `rln-bench-scale-${randomBytes(3).toString('hex')}`;
  const target = await createTestDatabase();
  const db = await openPostgres(target.url!);
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-cluster-'));
  const env = { ...SMALL_NODE_PODS, RUNTIME: 'kubernetes', KUBECONFIG: kubeconfig, K8S_NAMESPACE: namespace, DATABASE_URL: target.url!, DATA_DIR: dataDir };
  const figures: ClusterScaleFigures[] = [];
  try {
    // The bundle `npm start` runs, built now rather than inside the first start's figure.
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot, stdio: 'ignore' });
    kubectl(kubeconfig, ['create', 'namespace', namespace]);
    await migrate(db);
    await insertRelease(db, IMAGE_VERSION);
    let count = 0;
    for (const size of sizes) {
      await grow(db, count, size);
      applyPausedSets(kubeconfig, env, count, size);
      count = size;
      figures.push(await measure(kubeconfig, namespace, env, size));
    }
    return figures;
  } finally {
    await db.close();
    await target.drop();
    rmSync(dataDir, { recursive: true, force: true });
    kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=false', '--ignore-not-found']);
  }
}

/** The cluster part's table, or the one line saying why it was skipped. */
export async function printClusterScale(kubeconfig = process.env.TEST_KUBECONFIG) {
  console.log(`\n## The kubernetes runtime at ${CLUSTER_SCALE_SIZES.join(', ')} nodes on the test cluster (${RUNNING} RUNNING devnode, the rest PAUSED; PostgreSQL; bench/scale-cluster.ts)`);
  if (!kubeconfig) {
    console.log('skipped: set TEST_KUBECONFIG=$(scripts/test-cluster.sh up | tail -n1) (and TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)');
    return;
  }
  const figures = await benchScaleOnCluster(kubeconfig);
  const f = (n: number, d = 1) => n.toFixed(d);
  const row = (what: string, pick: (x: ClusterScaleFigures) => string) => console.log(`| ${what} | ${figures.map(pick).join(' | ')} |`);
  console.log(`| figure | ${figures.map((x) => `${x.nodes} nodes`).join(' | ')} |`);
  console.log(`|---|${figures.map(() => '---|').join('')}`);
  row('watch caches filled at start (3 lists), s', (x) => `${f(x.listedSeconds, 2)} (${x.listed.statefulSets} sets, ${x.listed.pods} pods, ${x.listed.services} services)`);
  row('process start to /readyz, s', (x) => f(x.readySeconds, 1));
  row('service RSS at rest, MiB', (x) => f(x.rssMb, 0));
  row('V8 heap used at rest, MiB', (x) => f(x.heapUsedMb, 0));
  row(`API-server requests per minute at rest (over ${Math.round(REST_MS / 1000)} s)`, (x) => `${f(x.requestsPerMinute, 2)} ${JSON.stringify(x.byVerb)}`);
  row('requests per idle node per hour', (x) => f(x.perIdleNodePerHour, 3));
  row('pod log streams open', (x) => String(x.logStreamsOpen));
  for (const x of figures) if (x.warnings.length > 0) console.log(`warnings at ${x.nodes} nodes:\n  ${x.warnings.join('\n  ')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await printClusterScale();
