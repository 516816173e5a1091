// npm run bench -- vss (issue #42): putObjects of 4 KiB and 64 KiB values from 1,000 node
// identities at once on PostgreSQL, over HTTP, beside a bare PostgreSQL upsert of the same rows in
// the same run; then p99 at a steady 500 writes/s; signature checks counted and timed apart. The
// requests come from a process of their own (bench/vss-load.ts, keys made and headers signed
// before the runs), so the service's event loop is measured alone.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer } from '../src/app.ts';
import { verifySigsSignature } from '../src/vss/sigs-auth.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { newVssKey } from '../test/helpers/vss-client.ts';
import { seedNodes } from './seed.ts';
import { pooled, runLoad, type LoadResult } from './load.ts';
import type { VssLoadCommand, VssLoadReply, VssLoadResult } from './vss-load.ts';

export const VSS_RATIO_AIM = 0.5;
export const VSS_P99_AIM_MS = 20;
export const VSS_STEADY_RATE = 500;
const IDENTITIES = 1000;
const CONCURRENCY = 64;
export const VSS_ROUNDS = 5;
const ROUNDS = VSS_ROUNDS;
// A payment makes a node write several keys at once (its channel monitor updates, the manager,
// the payment): each identity writes in bursts of this many puts, sent together.
export const VSS_BURST = 4;

export interface VssBenchRow {
  valueBytes: number;
  vss: VssLoadResult;
  /** `cpuMsPerWrite`: the same process's CPU per bare upsert (its pool and the loop calling it). */
  bareUpsert: LoadResult & { failed: number; cpuMsPerWrite: number };
  verifications: number;
  /** The service process's CPU per VSS write, ms (its event loop and pool; the generator is apart). */
  serviceCpuMsPerWrite: number;
  /** VSS / bare of each round (a VSS slice and the bare slice after it). */
  roundRatios: number[];
}

export interface VssBenchFigures {
  rows: VssBenchRow[];
  steady: VssLoadResult;
  verifyMs: number;
}

export async function benchVss(durationMs: number): Promise<VssBenchFigures> {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const target = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-vss-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    DATABASE_URL: target.url,
    LOG_LEVEL: 'silent',
    RUNTIME: 'process',
  });
  const server = await startServer(config, createLogger('silent'));
  const load = startLoadProcess();
  try {
    const user = await server.services.accounts.createUser({ email: 'bench-vss@example.com', plan: 'scale' });
    await seedNodes(server.db, user.id, IDENTITIES, 1, 'RUNNING');
    const nodeIds = (await server.db.query<{ id: string }>('SELECT id FROM nodes WHERE user_id = $1 ORDER BY id', [user.id])).map((r) => r.id);
    const paths: string[] = [];
    for (const nodeId of nodeIds) paths.push(`${new URL(await server.services.vss.issueUrl(user.id, nodeId)).pathname}/putObjects`);
    const pubkeys = (await load.run({ kind: 'prepare', base: config.publicUrl, paths, connections: CONCURRENCY })).pubkeys!;
    // Not measured: each identity's first write binds its key (once in a node's life) and the
    // connections, the JIT and the database's caches warm up.
    const warm = (await load.run({ kind: 'warm', valueBytes: 4096 })).result!;
    if (warm.statuses['200'] !== IDENTITIES) throw new Error(`warm-up answers: ${JSON.stringify(warm.statuses)}`);
    const verifier = (server.services.vss as any).opts.verifier as { verifications: number };

    // Each value size in ROUNDS rounds, a VSS slice then a bare-upsert slice: on a machine shared
    // with other work, the two see the same moments' load, and the rounds' ratios show the spread.
    const slice = durationMs / ROUNDS;
    const rows: VssBenchRow[] = [];
    for (const valueBytes of [4096, 65536]) {
      const value = Buffer.alloc(valueBytes, 1);
      const vssRuns: VssLoadResult[] = [];
      const bareRuns: LoadResult[] = [];
      const vssLatencies: number[] = [];
      const bareLatencies: number[] = [];
      const statuses: Record<string, number> = {};
      let verifications = 0;
      let vssCpuMs = 0;
      let bareCpuMs = 0;
      let failed = 0;
      let next = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const before = verifier.verifications;
        const cpu = process.cpuUsage();
        const vss = (await load.run({ kind: 'closed', valueBytes, burst: VSS_BURST, concurrency: CONCURRENCY, durationMs: slice })).result!;
        vssCpuMs += cpuMsSince(cpu);
        verifications += verifier.verifications - before;
        vssRuns.push(vss);
        vssLatencies.push(...vss.latencies!);
        for (const [status, count] of Object.entries(vss.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
        // The same rows written straight to PostgreSQL, through the service's own pool, from the
        // service's process (the load generator idles meanwhile).
        const bareCpu = process.cpuUsage();
        const bare = await runLoad(
          async () => {
            const n = next++;
            const i = Math.floor(n / VSS_BURST) % IDENTITIES;
            await server.db
              .query(
                `INSERT INTO vss_objects (node_id, store_id, key, version, value, bytes) VALUES ($1, $2, $5, 1, $3, $4)
                 ON CONFLICT (node_id, store_id, key) DO UPDATE SET version = 1, value = EXCLUDED.value, bytes = EXCLUDED.bytes, updated_at = now()`,
                [nodeIds[i], pubkeys[i], value, valueBytes, `key_${n % VSS_BURST}`],
              )
              .catch(() => failed++);
          },
          { concurrency: CONCURRENCY, durationMs: slice, latencies: bareLatencies },
        );
        bareCpuMs += cpuMsSince(bareCpu);
        bareRuns.push(bare);
      }
      const vss = { ...pooled(vssRuns, vssLatencies), statuses, cpuMs: vssRuns.reduce((sum, r) => sum + r.cpuMs, 0) };
      const bareUpsert = pooled(bareRuns, bareLatencies);
      rows.push({
        valueBytes,
        vss,
        bareUpsert: { ...bareUpsert, failed, cpuMsPerWrite: bareCpuMs / Math.max(1, bareUpsert.requests) },
        verifications,
        serviceCpuMsPerWrite: vssCpuMs / Math.max(1, vss.requests),
        roundRatios: vssRuns.map((r, i) => r.perSecond / bareRuns[i]!.perSecond),
      });
    }

    const steady = (await load.run({ kind: 'rate', valueBytes: 4096, burst: VSS_BURST, perSecond: VSS_STEADY_RATE, durationMs })).result!;

    // One verification alone, as the server would do it without the reuse.
    const key = newVssKey();
    const header = key.token();
    const sig = Buffer.from(header.slice(66, 194), 'hex');
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) verifySigsSignature(key.publicKey, sig, header.slice(194));
    const verifyMs = (performance.now() - t0) / 200;
    return { rows, steady, verifyMs };
  } finally {
    load.stop();
    await server.stop();
    await target.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function startLoadProcess() {
  const child = fork(new URL('./vss-load.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const run = (cmd: VssLoadCommand) =>
    new Promise<Extract<VssLoadReply, { ok: true }>>((resolve, reject) => {
      const onExit = () => reject(new Error('the VSS load generator exited'));
      child.once('exit', onExit);
      child.once('message', (reply: VssLoadReply) => {
        child.off('exit', onExit);
        if (reply.ok) resolve(reply);
        else reject(new Error(reply.error));
      });
      child.send(cmd);
    });
  return { run, stop: () => child.kill() };
}

/** Answers by status, e.g. "200: 7985" or "200: 7980, 500: 5". */
export const statusCounts = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

/** Answers that are not 2xx (failed requests included). */
export const non2xx = (statuses: Record<string, number>) => Object.entries(statuses).reduce((sum, [k, v]) => (/^2\d\d$/.test(k) ? sum : sum + v), 0);
