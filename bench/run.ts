// npm run bench: every figure beside its baseline, measured in one run (these machines are noisy).
import os from 'node:os';
import { benchListNodes } from './list-nodes.ts';
import { benchStartup } from './startup.ts';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (n: number, d = 1) => n.toFixed(d);

console.log(`# rln-cloud benchmarks, ${new Date().toISOString()}`);
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`);

console.log('## GET /api/nodes, 100 nodes x 5 builds, 8 concurrent callers');
console.log('| database | path | req/s | p50 ms | p99 ms | HTTP / in-process |');
console.log('|---|---|---|---|---|---|');
for (const database of ['PGlite', 'PostgreSQL'] as const) {
  try {
    const r = await benchListNodes(database, DURATION_MS);
    console.log(`| ${database} | in-process listNodes | ${f(r.inProcess.perSecond)} | ${f(r.inProcess.p50Ms, 2)} | ${f(r.inProcess.p99Ms, 2)} | |`);
    console.log(`| ${database} | HTTP (${Math.round(r.bodyBytes / 1024)} KiB body) | ${f(r.http.perSecond)} | ${f(r.http.p50Ms, 2)} | ${f(r.http.p99Ms, 2)} | ${f(r.http.perSecond / r.inProcess.perSecond, 2)} |`);
  } catch (err) {
    console.log(`| ${database} | skipped: ${(err as Error).message} | | | | |`);
  }
}

const s = await benchStartup(3);
console.log('\n## Start-up to /healthz 200 with an existing DATA_DIR (PGlite, 100 nodes), median of 3');
console.log('| what | ms |');
console.log('|---|---|');
console.log(`| npm start (rln-cloud) | ${f(median(s.npmStart), 0)} (runs: ${s.npmStart.map((x) => f(x, 0)).join(', ')}) |`);
console.log(`| baseline: bare node:http server | ${f(median(s.bareNode), 0)} |`);
console.log('\n## Resident memory of the idle service (PGlite)');
console.log('| what | RSS MiB |');
console.log('|---|---|');
console.log(`| 100 nodes x 5 builds | ${f(s.rss100, 0)} |`);
console.log(`| baseline: empty database | ${f(s.rss0, 0)} |`);
