// npm run bench: every figure beside its baseline, measured in one run (these machines are noisy).
import os from 'node:os';
import { benchListNodes, LIST_NODES_RATIO_AIM } from './list-nodes.ts';
import { benchUsage, USAGE_P99_AIM_MS } from './usage.ts';
import { benchStartup } from './startup.ts';
import { benchSignature, benchWebhooks, WEBHOOK_RATIO_AIM } from './webhooks.ts';
import { benchRollout, ROLLOUT_DATABASES, type RolloutDatabase } from './rollout.ts';
import { benchLogExport } from './log-export.ts';
import { benchBackups } from './backups.ts';
import { printGatewaySection } from './gateway.ts';
import { benchReplicas } from './replicas.ts';
import { benchDeployedGateway } from './deployed-gateway.ts';
import { benchLifecycle, benchWatchMemory, LIFECYCLE_STEPS } from './kubernetes.ts';
import { benchEventStream } from './events-stream.ts';
import { benchBareFastify, benchServiceMemory, type MemoryFigures } from './memory.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { benchScale, GET_RATE, LIST_RATE, SCALE_SIZES } from './scale.ts';
import { printClusterScale } from './scale-cluster.ts';
import { benchVssSignature, type VssSignatureFigures } from './vss-signature.ts';
import { signatureBackend } from '../src/vss/sigs-auth.ts';
import { benchVss, non2xx, statusCounts, VSS_BURST, VSS_ROUNDS, VSS_P99_AIM_MS, VSS_RATIO_AIM, VSS_STEADY_RATE } from './vss.ts';
import { benchPasswordHashing, HASH_RATE, HASHING_RATIO_AIM, READ_RATE } from './password-hashing.ts';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (n: number, d = 1) => n.toFixed(d);

console.log(`# rln-cloud benchmarks, ${new Date().toISOString()}`);
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`);

// Sections run in this order; `npm run bench -- rollout,webhooks` (or BENCH_ONLY=...) runs some alone.
const sections: Record<string, () => Promise<void>> = {
  'list-nodes': async () => {
    console.log('## GET /api/nodes, 100 nodes x 5 builds, 8 concurrent callers');
    console.log(`| database | path | req/s | p50 ms | p99 ms | HTTP / in-process (aim: >= ${LIST_NODES_RATIO_AIM}) |`);
    console.log('|---|---|---|---|---|---|');
    for (const database of ['PGlite', 'PostgreSQL'] as const) {
      try {
        const r = await benchListNodes(database, DURATION_MS);
        const ratio = r.http.perSecond / r.inProcess.perSecond;
        console.log(`| ${database} | in-process listNodes | ${f(r.inProcess.perSecond)} | ${f(r.inProcess.p50Ms, 2)} | ${f(r.inProcess.p99Ms, 2)} | |`);
        console.log(
          `| ${database} | HTTP (${Math.round(r.bodyBytes / 1024)} KiB body) | ${f(r.http.perSecond)} | ${f(r.http.p50Ms, 2)} | ${f(r.http.p99Ms, 2)} | ` +
            `${f(ratio, 2)} (${ratio >= LIST_NODES_RATIO_AIM ? 'met' : 'missed'}) |`,
        );
      } catch (err) {
        console.log(`| ${database} | skipped: ${(err as Error).message} | | | | |`);
      }
    }
  },
  usage: async () => {
    console.log('\n## GET /api/usage of an account with 1,000 nodes (PostgreSQL, one caller at a time)');
    console.log(`| nodes | status changes | req/s | p50 ms | p99 ms | aim: p99 < ${USAGE_P99_AIM_MS} ms |`);
    console.log('|---|---|---|---|---|---|');
    try {
      const u = await benchUsage(DURATION_MS);
      console.log(`| ${u.nodes} | ${u.statusChanges} | ${f(u.result.perSecond)} | ${f(u.result.p50Ms, 2)} | ${f(u.result.p99Ms, 2)} | ${u.result.p99Ms < USAGE_P99_AIM_MS ? 'met' : 'missed'} |`);
    } catch (err) {
      console.log(`| skipped: ${(err as Error).message} | | | | | |`);
    }
  },
  vss: async () => {
    console.log(`\n## VSS putObjects from 1,000 node identities at once, each in bursts of ${VSS_BURST} (PostgreSQL, HTTP, 64 concurrent callers from a load process of their own), beside a bare upsert of the same rows`);
    console.log(`${VSS_ROUNDS} rounds of a VSS slice then a bare-upsert slice, ${DURATION_MS / VSS_ROUNDS} ms each; rates pooled over the rounds, each round's ratio beside.`);
    console.log(`| value | VSS writes/s | non-2xx | p50 ms | p99 ms | signature checks | service CPU ms per write (bare) | bare upsert writes/s | failed | VSS / bare (aim: >= ${VSS_RATIO_AIM}) | rounds' ratios |`);
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    try {
      const r = await benchVss(DURATION_MS);
      for (const row of r.rows) {
        const ratio = row.vss.perSecond / row.bareUpsert.perSecond;
        console.log(
          `| ${row.valueBytes / 1024} KiB | ${f(row.vss.perSecond)} | ${non2xx(row.vss.statuses)} (${statusCounts(row.vss.statuses)}) | ${f(row.vss.p50Ms, 2)} | ${f(row.vss.p99Ms, 2)} | ` +
            `${row.verifications} of ${row.vss.requests} requests | ${f(row.serviceCpuMsPerWrite, 3)} (${f(row.bareUpsert.cpuMsPerWrite, 3)}) | ${f(row.bareUpsert.perSecond)} | ${row.bareUpsert.failed} | ${f(ratio, 2)} (${ratio >= VSS_RATIO_AIM ? 'met' : 'missed'}) | ${row.roundRatios.map((x) => f(x, 2)).join(', ')} |`,
        );
      }
      const s = r.steady;
      console.log(
        `\nAt a steady ${VSS_STEADY_RATE} writes/s (4 KiB): ${f(s.perSecond)} answered/s, non-2xx ${non2xx(s.statuses)} (${statusCounts(s.statuses)}), p50 ${f(s.p50Ms, 2)} ms, p99 ${f(s.p99Ms, 2)} ms ` +
          `(aim < ${VSS_P99_AIM_MS}: ${s.p99Ms < VSS_P99_AIM_MS && non2xx(s.statuses) === 0 ? 'met' : 'missed'}; the generator sent late by p99 ${f(s.sendLateP99Ms ?? NaN, 2)} ms); one signature verification alone: ${f(r.verifyMs, 2)} ms`,
      );
    } catch (err) {
      console.log(`| skipped: ${(err as Error).message} | | | | | | | | | | |`);
    }
  },
  'vss-signature': async () => {
    console.log(`\n## One VSS sigs check not answered from memory (each header distinct), median of 3 runs; the service uses ${signatureBackend()}`);
    console.log(`| key | library | ms per check (median) | runs ms |`);
    console.log('|---|---|---|---|');
    // Alternated, so both libraries see the same moments of a noisy machine.
    const runs = { libsecp256k1: [] as VssSignatureFigures[], openssl: [] as VssSignatureFigures[] };
    for (let i = 0; i < 3; i++) for (const backend of ['libsecp256k1', 'openssl'] as const) runs[backend].push(benchVssSignature(backend));
    for (const [what, pick] of [['checked before', (r: VssSignatureFigures) => r.seenKeyMs], ['never seen', (r: VssSignatureFigures) => r.newKeyMs]] as const) {
      for (const backend of ['libsecp256k1', 'openssl'] as const) {
        console.log(`| ${what} | ${backend} | ${f(median(runs[backend].map(pick)), 3)} | ${runs[backend].map((r) => f(pick(r), 3)).join(', ')} |`);
      }
    }
  },
  rollout: async () => {
    const ROLLOUT_NODES = Number(process.env.BENCH_ROLLOUT_NODES ?? 2000);
    console.log(`\n## Release rollout over ${ROLLOUT_NODES} RUNNING nodes of Scale users, in-memory runtime (rollout concurrency 32, 16 build workers)`);
    console.log('| database | upgrades/s | statements per upgrade | seconds | baseline: single UPDATE per node, /s | upgrades / baseline |');
    console.log('|---|---|---|---|---|---|');
    for (const database of Object.keys(ROLLOUT_DATABASES) as RolloutDatabase[]) {
      try {
        const r = await benchRollout(database, ROLLOUT_NODES);
        console.log(`| ${database} | ${f(r.upgradesPerSecond)} | ${f(r.statementsPerUpgrade)} | ${f(r.seconds)} | ${f(r.baselineUpdatesPerSecond)} | ${f(r.upgradesPerSecond / r.baselineUpdatesPerSecond, 2)} |`);
      } catch (err) {
        console.log(`| ${database} | skipped: ${(err as Error).message} | | | | |`);
      }
    }
  },
  startup: async () => {
    const s = await benchStartup(3);
    console.log('\n## Start-up to /healthz 200 with an existing DATA_DIR (PGlite, 100 nodes), median of 3');
    console.log('| what | ms |');
    console.log('|---|---|');
    console.log(`| npm start (rln-cloud) | ${f(median(s.npmStart), 0)} (runs: ${s.npmStart.map((x) => f(x, 0)).join(', ')}) |`);
    console.log(`| node with npm start's command line (no npm in between) | ${f(median(s.nodeStart), 0)} (runs: ${s.nodeStart.map((x) => f(x, 0)).join(', ')}) |`);
    console.log(`| baseline: bare node:http server, started with node | ${f(median(s.bareNode), 0)} |`);
    console.log(`| floor with the embedded database: the bare server opening the same PGlite database first (npm start's V8 flags) | ${f(median(s.barePglite), 0)} (runs: ${s.barePglite.map((x) => f(x, 0)).join(', ')}) |`);
    console.log(`| rln-cloud release list (an operator command on PGlite, start to exit) | ${f(median(s.cli), 0)} (runs: ${s.cli.map((x) => f(x, 0)).join(', ')}) |`);
    console.log(`aim: at most 5x the bare start: ${f(median(s.nodeStart) / median(s.bareNode), 1)}x with node, ${f(median(s.npmStart) / median(s.bareNode), 1)}x through npm (${median(s.nodeStart) <= 5 * median(s.bareNode) ? 'met' : 'missed'})`);
    console.log(`the service's own share: ${f(median(s.nodeStart) - median(s.barePglite), 0)} ms more than the bare server opening PGlite, whose open alone is ${f(median(s.barePglite) / median(s.bareNode), 1)}x the bare start`);
    console.log('\n## Resident memory of the idle service (PGlite)');
    console.log('| what | RSS MiB |');
    console.log('|---|---|');
    console.log(`| 100 nodes x 5 builds | ${f(s.rss100, 0)} |`);
    console.log(`| baseline: empty database | ${f(s.rss0, 0)} |`);
  },
  memory: async () => {
    const COUNT = Number(process.env.BENCH_MEMORY_REQUESTS ?? 4000);
    console.log(`\n## Resident memory: idle, then ${COUNT} mixed requests (16 at a time: valid calls, bad bodies, unknown tokens and paths, gateway calls, pages), then idle again`);
    console.log('| process | idle RSS MiB | peak during the requests | after, settled | answers |');
    console.log('|---|---|---|---|---|');
    const row = (what: string, m: MemoryFigures) =>
      console.log(`| ${what} | ${f(m.idleMb, 0)} | ${f(m.peakMb, 0)} | ${f(m.afterMb, 0)} | ${Object.entries(m.statuses).map(([k, v]) => `${k} ${v}`).join(', ')} |`);
    const pglite = await benchServiceMemory(undefined, COUNT);
    row('rln-cloud, embedded default (PGlite, 100 nodes)', pglite);
    try {
      process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
      const pg = await createTestDatabase();
      try {
        row('rln-cloud, PostgreSQL (100 nodes)', await benchServiceMemory(pg.url, COUNT));
      } finally {
        await pg.drop();
      }
    } catch (err) {
      console.log(`| rln-cloud, PostgreSQL | skipped: ${(err as Error).message} | | | |`);
    }
    const bare = await benchBareFastify(COUNT);
    row('floor: bare Fastify (one JSON route, one schema\'d POST)', bare);
    const met = (ok: boolean) => (ok ? 'met' : 'missed');
    console.log(`aims (PGlite): idle <= 200 MiB ${met(pglite.idleMb <= 200)} (${f(pglite.idleMb / bare.idleMb, 1)}x the bare Fastify), after the requests <= 300 MiB ${met(pglite.afterMb <= 300)}`);
  },
  'log-export': async () => {
    const LOG_EXPORT_MB = Number(process.env.BENCH_LOG_EXPORT_MB ?? 500);
    const le = await benchLogExport(LOG_EXPORT_MB);
    console.log(`\n## Log export: ${f(le.inputMb, 0)} MB of one node's logs (${le.files} files), npm start, PGlite, local blob store, gzip level 1`);
    console.log('| what | figure |');
    console.log('|---|---|');
    console.log(`| export, POST to SUCCEEDED | ${f(le.exportMbPerSecond)} MB/s (${f(le.exportSeconds)} s; ${le.parts} part(s), ${f(le.outputMb)} MB gzip) |`);
    console.log(`| baseline: bare read -> gzip -> write pipeline, same files | ${f(le.baselineMbPerSecond)} MB/s (export / baseline ${f(le.exportMbPerSecond / le.baselineMbPerSecond, 2)}) |`);
    console.log(`| service RSS: peak growth during the export | ${f(le.rssPeakGrowthMb)} MiB (idle ${f(le.rssBaselineMb, 0)} MiB) |`);
    console.log(`| collector (RotatingLog.write, incl. generating the lines) | ${f(le.collectMbPerSecond)} MB/s |`);
  },
  backups: async () => {
    const BACKUP_MB = Number(process.env.BENCH_BACKUP_MB ?? 200);
    const b = await benchBackups(BACKUP_MB);
    console.log(`\n## Backup and restore of a node whose storage holds ${BACKUP_MB} MB (random bytes), npm start, PGlite, local blob store, devnode`);
    console.log('| what | seconds | MB/s | service RSS peak growth, MiB |');
    console.log('|---|---|---|---|');
    console.log(`| backup: POST to SUCCEEDED (node locks, encrypts, service streams to the store, node unlocks; ${f(b.backupFileMb, 0)} MB file) | ${f(b.backupSeconds, 2)} | ${f(b.storageMb / b.backupSeconds)} | ${f(b.backupRssGrowthMb)} |`);
    console.log(`| restore: POST /api/nodes {restore} to RUNNING with the wallet | ${f(b.restoreSeconds, 2)} | ${f(b.storageMb / b.restoreSeconds)} | ${f(b.restoreRssGrowthMb)} |`);
    console.log(`| baseline: create an empty node, POST to RUNNING | ${f(b.emptyCreateSeconds, 2)} | | |`);
    console.log(`| baseline: bare stream copy of the same file | ${f(b.bareCopySeconds, 2)} | ${f(b.storageMb / b.bareCopySeconds)} | |`);
    console.log(`| service idle RSS | | | ${f(b.rssIdleMb, 0)} |`);
  },
  webhooks: async () => {
    const sig = await benchSignature();
    console.log('\n## Webhooks: signed deliveries to a loopback receiver (4,000 events over 100 nodes, 32 in flight, after a warm-up run)');
    console.log(
      `| database | deliveries/s (fan-out, claim, sign, POST, record) | baseline: the same signed POSTs without the database, the faster of signed ahead and signed in the POST's slot | ratio (aim on PostgreSQL: >= ${WEBHOOK_RATIO_AIM}) | ` +
        'the same POSTs unsigned | ratio to those | service CPU µs per delivery / per baseline POST (main thread) | database CPU µs per delivery | statements per delivery | transactions per delivery |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const database of ['PGlite', 'PostgreSQL'] as const) {
      try {
        // A first, smaller run is discarded: it brings both sides' code paths (the HTTP client and
        // the signing above all) to their steady speed. Otherwise the baselines, measured first,
        // run partly cold and the ratio flatters the dispatcher, measured last.
        await benchWebhooks(database, 2000);
        const w = await benchWebhooks(database);
        const ratio = w.deliveriesPerSecond / w.baselinePostsPerSecond;
        const aim = database === 'PostgreSQL' ? (ratio >= WEBHOOK_RATIO_AIM ? ' (met)' : ' (missed)') : '';
        console.log(
          `| ${database} | ${f(w.deliveriesPerSecond)} | ${f(w.baselinePostsPerSecond)} (ahead ${f(w.signedAheadPostsPerSecond)}; in the slot ${f(w.signedInSlotPostsPerSecond)}) | ${f(ratio, 2)}${aim} | ${f(w.unsignedPostsPerSecond)} | ` +
            `${f(w.deliveriesPerSecond / w.unsignedPostsPerSecond, 2)} | ` +
            `${f(w.cpuMicrosPerDelivery, 0)} (${f(w.mainThreadMicrosPerDelivery, 0)}) / ${f(w.cpuMicrosPerBaselinePost, 0)} (${f(w.mainThreadMicrosPerBaselinePost, 0)}) | ` +
            `${w.databaseCpuMicrosPerDelivery === undefined ? 'in the service' : f(w.databaseCpuMicrosPerDelivery, 0)} | ${f(w.statementsPerDelivery, 3)} | ${f(w.transactionsPerDelivery, 3)} |`,
        );
      } catch (err) {
        console.log(`| ${database} | skipped: ${(err as Error).message} | | | | | | | | |`);
      }
    }
    console.log(`\nOne Ed25519 webhook signature, awaited (made on the thread pool): ${f(sig.microseconds)} µs (${f(sig.perSecond, 0)}/s one after another)`);
  },
  'events-stream': async () => {
    console.log('\n## Event streams: 1,000 SSE clients (100 users x 10) following their nodes while 200 nodes change state (npm start-like service process, changes through NodeService)');
    console.log('| database | commits/s | events delivered/s | p50 ms | p99 ms | max ms | poller reads / events | service RSS per client KiB | of which JS heap KiB | baseline: bare node:http SSE, RSS KiB per client |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const database of ['PGlite', 'PostgreSQL'] as const) {
      try {
        const r = await benchEventStream(database);
        console.log(
          `| ${database} | ${f(r.commitsPerSecond)} | ${f(r.deliveriesPerSecond)} (${r.deliveries} to ${r.clients} clients) | ${f(r.p50Ms, 0)} | ${f(r.p99Ms, 0)} | ${f(r.maxMs, 0)} | ` +
            `${r.pollReads} / ${r.events} | ${f(r.perClientKiB)} (${f(r.rssIdleMb, 0)} MiB with ${r.clients} streams, ${f(r.rssClientsMb, 0)} with ${2 * r.clients}, peak ${f(r.rssPeakMb, 0)} while delivering) | ${f(r.heapPerClientKiB)} | ${f(r.baselinePerClientKiB)} |`,
        );
      } catch (err) {
        console.log(`| ${database} | skipped: ${(err as Error).message} | | | | | | | | |`);
      }
    }
  },
  gateway: () => printGatewaySection(DURATION_MS),
  'deployed-gateway': async () => {
    console.log(`\n## Bearer gateway of the deployed service (deploy/kubernetes on the test cluster), through its NodePort, ${50} connections`);
    if (!process.env.TEST_KUBECONFIG) {
      console.log('skipped: set TEST_KUBECONFIG=$(scripts/test-cluster.sh up | tail -n1)');
      return;
    }
    const d = await benchDeployedGateway(DURATION_MS);
    console.log('| path | req/s | p50 ms | p99 ms | / direct |');
    console.log('|---|---|---|---|---|');
    for (const [what, r] of [['one replica, through the Service', d.oneReplica], ['two replicas, through the Service', d.twoReplicas], ['baseline: the node pod directly, no gateway', d.direct]] as const) {
      console.log(`| ${what} | ${f(r.perSecond)} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.perSecond / d.direct.perSecond, 2)} |`);
    }
    console.log(`two replicas / one: ${f(d.twoReplicas.perSecond / d.oneReplica.perSecond, 2)}`);
  },
  replicas: async () => {
    console.log('\n## Several replicas on one PostgreSQL: the same work by one and by two replica processes');
    console.log('| work | one replica /s | two replicas /s | two / one |');
    console.log('|---|---|---|---|');
    for (const mode of ['rollout', 'webhooks'] as const) {
      try {
        const one = await benchReplicas(mode, 1);
        const two = await benchReplicas(mode, 2);
        const what = mode === 'rollout' ? `rollout upgrades (${one.items} nodes, in-memory runtime)` : `webhook deliveries (${one.items} events, 100 nodes)`;
        console.log(`| ${what} | ${f(one.perSecond)} | ${f(two.perSecond)} | ${f(two.perSecond / one.perSecond, 2)} |`);
      } catch (err) {
        console.log(`| ${mode} | skipped: ${(err as Error).message} | | |`);
      }
    }
  },
  'password-hashing': async () => {
    console.log(`\n## GET /api/nodes (100 nodes) at ${READ_RATE}/s alone and beside ${HASH_RATE} hash-heavy requests/s (PostgreSQL, the service in its own process; bench/password-hashing.ts)`);
    console.log('Median over the rounds (alone, beside sign-ins, beside accepts, in turn), each round\'s figure in brackets; answers by status summed over the rounds.');
    console.log(`| hashing gate | beside the reads | reads p50 ms | reads p99 ms | p99 / alone (aim: <= ${HASHING_RATIO_AIM} with the default gate) | reads' answers | hash-heavy p50 / p99 ms | their answers |`);
    console.log('|---|---|---|---|---|---|---|---|');
    const statuses = (runs: { statuses: Record<string, number> }[]) => {
      const sum: Record<string, number> = {};
      for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) sum[k] = (sum[k] ?? 0) + v;
      return Object.entries(sum).map(([k, v]) => `${k}: ${v}`).join(', ');
    };
    const p99 = (runs: { p99Ms: number }[]) => median(runs.map((r) => r.p99Ms));
    const p50 = (runs: { p50Ms: number }[]) => median(runs.map((r) => r.p50Ms));
    const rows = await benchPasswordHashing();
    for (const r of rows) {
      const alone = rows.find((x) => x.gate === r.gate && x.load === 'none')!;
      const ratio = p99(r.reads) / p99(alone.reads);
      const verdict = r.load === 'none' ? '' : `${f(ratio, 2)}${r.gate.startsWith('default') ? (ratio <= HASHING_RATIO_AIM ? ' (met)' : ' (missed)') : ''}`;
      const what = { none: 'nothing', 'sign-ins': `${HASH_RATE}/s sign-ins (one scrypt each)`, accepts: `${HASH_RATE}/s accepts, 1 KiB passwords, unknown secrets` }[r.load];
      const hashing = r.hashing.length ? `${f(p50(r.hashing), 1)} / ${f(p99(r.hashing), 1)}` : '';
      console.log(
        `| ${r.gate} | ${what} | ${f(p50(r.reads), 1)} | ${f(p99(r.reads), 1)} (${r.reads.map((x) => f(x.p99Ms, 0)).join(', ')}) | ${verdict} | ${statuses(r.reads)} | ${hashing} | ${statuses(r.hashing)} |`,
      );
    }
  },
  scale: async () => {
    console.log(`\n## The control plane at ${SCALE_SIZES.join(', ')} nodes (PostgreSQL, in-memory runtime; 9 in 10 nodes PAUSED; bench/scale.ts)`);
    const figures = await benchScale();
    const row = (what: string, aim: string, pick: (x: (typeof figures)[number]) => string) => console.log(`| ${what} | ${figures.map(pick).join(' | ')} | ${aim} |`);
    console.log(`| figure | ${figures.map((x) => `${x.nodes} nodes`).join(' | ')} | aim at 10,000 nodes |`);
    console.log(`|---|${figures.map(() => '---|').join('')}---|`);
    row('service RSS at rest, MiB', 'at most 2x the 100-node figure', (x) => f(x.rssMb, 0));
    row('V8 heap used at rest, MiB', '', (x) => f(x.heapUsedMb, 0));
    row('database size, MiB', '', (x) => f(x.databaseMb, 0));
    row('one reconcile pass, ms (every RECONCILE_INTERVAL_MS, 5 s)', 'under 500', (x) => f(x.reconcilePassMs, 1));
    row(`GET /api/nodes?limit=100 p99 (p50) while the fleet works, ${LIST_RATE}/s, ms`, 'under 30', (x) => `${f(x.listAtRate.p99Ms, 1)} (${f(x.listAtRate.p50Ms, 1)})`);
    row(`GET /api/nodes/{id} p99 (p50) while the fleet works, ${GET_RATE}/s, ms`, 'under 10', (x) => `${f(x.oneAtRate.p99Ms, 1)} (${f(x.oneAtRate.p50Ms, 1)})`);
    // What of those tails is the service's own: its event loop's delay over each run, and how late the generator sent.
    row(`  of which: the service's event loop delay p99 / max, ${LIST_RATE}/s and ${GET_RATE}/s, ms`, '', (x) => `${f(x.listAtRateLoopDelay.p99Ms, 0)} / ${f(x.listAtRateLoopDelay.maxMs, 0)}; ${f(x.oneAtRateLoopDelay.p99Ms, 0)} / ${f(x.oneAtRateLoopDelay.maxMs, 0)}`);
    row(`  of which: the load generator's own lateness p99, ${LIST_RATE}/s and ${GET_RATE}/s, ms`, '', (x) => `${f(x.listAtRate.sendLateP99Ms ?? NaN, 1)}; ${f(x.oneAtRate.sendLateP99Ms ?? NaN, 1)}`);
    row('the list saturated (4 callers): answers/s, p99 ms', '', (x) => `${f(x.listSaturated.perSecond, 0)}, ${f(x.listSaturated.p99Ms, 1)}`);
    row('the node saturated (4 callers): answers/s, p99 ms', '', (x) => `${f(x.oneSaturated.perSecond, 0)}, ${f(x.oneSaturated.p99Ms, 1)}`);
    row('creating nodes, answers/s (16 at a time)', 'at least 200', (x) => f(x.createsPerSecond, 0));
    row('release rollout, RUNNING nodes upgraded/s', 'at least 1,000', (x) => `${f(x.upgradesPerSecond, 0)} (${x.upgraded}, ${x.rolloutState})`);
    row('a bad release before it: upgrades failed before it paused (budget 10)', 'failure budget honoured: at most 11', (x) => `${x.badReleaseFailed} (${x.badReleaseState})`);
    await printClusterScale();
  },
  kubernetes: async () => {
    const kubeconfig = process.env.TEST_KUBECONFIG;
    console.log('\n## Kubernetes runtime on the test cluster beside the process runtime (devnode, PGlite), median of 3 (upgrade: 1)');
    if (!kubeconfig) {
      console.log('skipped: set TEST_KUBECONFIG=$(scripts/test-cluster.sh up | tail -n1)');
      return;
    }
    const process_ = await benchLifecycle('process', kubeconfig, 3);
    const k8s = await benchLifecycle('kubernetes', kubeconfig, 3);
    console.log('| step (API call to settled) | process s | kubernetes s | kubernetes API requests |');
    console.log('|---|---|---|---|');
    for (const step of LIFECYCLE_STEPS) {
      console.log(`| ${step} | ${f(median(process_.seconds[step]), 2)} | ${f(median(k8s.seconds[step]), 2)} | ${k8s.apiRequests?.[step] ?? ''} |`);
    }
    const COUNT = Number(process.env.BENCH_WATCH_OBJECTS ?? 500);
    const mem = await benchWatchMemory(kubeconfig, COUNT);
    console.log(`\n| service RSS (npm start, RUNTIME=kubernetes, idle) | MiB |`);
    console.log('|---|---|');
    console.log(`| watching ${COUNT} StatefulSets (zero replicas) | ${f(mem.withObjects, 0)} |`);
    console.log(`| baseline: watching an empty namespace | ${f(mem.empty, 0)} |`);
  },
};

const only = (process.env.BENCH_ONLY ?? process.argv[2] ?? '').split(',').filter(Boolean);
const unknown = only.filter((name) => !sections[name]);
if (unknown.length > 0) {
  console.error(`unknown section(s) ${unknown.join(', ')}; choose from ${Object.keys(sections).join(', ')}`);
  process.exit(2);
}
for (const [name, run] of Object.entries(sections)) {
  if (only.length === 0 || only.includes(name)) await run();
}
