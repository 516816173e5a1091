// Start-up time of `npm start` with an existing DATA_DIR (to /healthz 200), and resident memory
// of the idle service with 100 nodes, each beside its baseline: a bare node:http server's start,
// and the idle service with no nodes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/open.ts';
import { PGLITE_SETTINGS } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { AccountService } from '../src/accounts/service.ts';
import { ReleaseService } from '../src/releases/service.ts';
import { acquireDataDirLock } from '../src/db/data-dir-lock.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { repoRoot } from '../test/helpers/service-process.ts';
import { seedNodes } from './seed.ts';

export async function timeToHealthy(command: string, args: string[], env: NodeJS.ProcessEnv, url: string, settleMs = 3000) {
  const started = performance.now();
  const child = spawn(command, args, { cwd: repoRoot, env, stdio: 'ignore', detached: true });
  try {
    for (;;) {
      try {
        if ((await fetch(url)).status === 200) break;
      } catch {}
      if (performance.now() - started > 60_000) throw new Error(`${command} did not become healthy`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - started;
    await new Promise((r) => setTimeout(r, settleMs)); // idle: let start-up garbage settle
    const pid = env.DATA_DIR ? JSON.parse(readFileSync(join(env.DATA_DIR, 'rln-cloud.lock'), 'utf8')).pid : child.pid!;
    const rssMb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
    return { ms, rssMb };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {}
    await new Promise((r) => setTimeout(r, 1500));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  }
}

/**
 * A DATA_DIR (and its database: PGlite inside it, or `databaseUrl`) with a Scale user owning
 * `nodes` nodes of 5 builds each; the user's API token is in DATA_DIR/bench-token.
 */
export async function prepareDataDir(nodes: number, databaseUrl?: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-start-'));
  const config = loadConfig({ DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const lock = acquireDataDirLock(dataDir, 'cli');
  if (!lock.acquired) throw new Error('lock');
  const db = await openDatabase(config);
  await migrate(db);
  await new ReleaseService(db, { concurrency: 1, failureBudget: 0 }).seed(config.initialImageVersion);
  const accounts = new AccountService(db);
  const user = await accounts.createUser({ email: 'bench@example.com', plan: 'scale' });
  if (nodes > 0) await seedNodes(db, user.id, nodes, 5);
  writeFileSync(join(dataDir, 'bench-token'), (await accounts.createToken('bench@example.com', 'bench')).token);
  await db.close();
  lock.release();
  return dataDir;
}

/** `npm start`'s command line after `node` (its V8 flags included), read from package.json. */
export function npmStartArgs(): string[] {
  const start: string = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts.start;
  const [node, ...args] = start.split(/\s+/);
  if (node !== 'node') throw new Error(`npm start does not run node: ${start}`);
  return args;
}

/** The V8 and Node flags `npm start` runs the service with, for a bench that starts it otherwise. */
export function npmStartFlags(): string[] {
  return npmStartArgs().filter((word) => word.startsWith('--'));
}

/** One operator command from start to exit, launched as the CLI's shebang launches it (PGlite in `dataDir`). */
function timeCli(args: string[], dataDir: string): number {
  const shebang = readFileSync(join(repoRoot, 'bin/rln-cloud.mjs'), 'utf8').split('\n')[0]!;
  const flags = shebang.split(/\s+/).filter((word) => word.startsWith('--'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  delete env.DATABASE_URL;
  const started = performance.now();
  const run = spawnSync(process.execPath, [...flags, join(repoRoot, 'bin/rln-cloud.mjs'), ...args], { env, stdio: 'ignore' });
  if (run.status !== 0) throw new Error(`rln-cloud ${args.join(' ')} exited with ${run.status}`);
  return performance.now() - started;
}

/**
 * The embedded database's share of a start: a bare node:http server that first opens the same
 * PGlite database as the service would (same V8 flags, same settings), then listens. It closes the
 * database when stopped, so the next start measured finds it shut down cleanly.
 */
function bareServerOpeningPglite(dataDir: string, port: number): string[] {
  const open = `const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create(${JSON.stringify(join(dataDir, 'pglite'))}, { startParams: [...PGlite.defaultStartParams, ...${JSON.stringify(PGLITE_SETTINGS)}] });
    (await import('node:http')).createServer((q, s) => s.end('ok')).listen(${port});
    process.on('SIGTERM', () => db.close().then(() => process.exit(0)));`;
  return [...npmStartArgs().filter((arg) => arg.startsWith('--')), '--input-type=module', '-e', open];
}

export async function benchStartup(rounds: number) {
  const results = {
    npmStart: [] as number[],
    nodeStart: [] as number[],
    bareNode: [] as number[],
    barePglite: [] as number[],
    cli: [] as number[],
    rss100: 0,
    rss0: 0,
  };
  const withNodes = await prepareDataDir(100);
  const empty = await prepareDataDir(0);
  try {
    for (let i = 0; i < rounds; i++) {
      const port = await freePort();
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: withNodes, API_PORT: String(port), NODE_API_PORT: String(await freePort()), NODE_PORT_RANGE: randomNodePortRange(), LOG_LEVEL: 'warn' };
      delete env.DATABASE_URL;
      const svc = await timeToHealthy('npm', ['start'], env, `http://127.0.0.1:${port}/healthz`);
      results.npmStart.push(svc.ms);
      results.rss100 = Math.max(results.rss100, svc.rssMb);
      // What npm start runs, launched like the bare server below: the same launcher on both sides.
      const direct = await timeToHealthy(process.execPath, npmStartArgs(), env, `http://127.0.0.1:${port}/healthz`);
      results.nodeStart.push(direct.ms);
      const barePort = await freePort();
      const bare = await timeToHealthy(process.execPath, ['-e', `require('http').createServer((q,s)=>s.end('ok')).listen(${barePort})`], { ...process.env, DATA_DIR: '' }, `http://127.0.0.1:${barePort}/`);
      results.bareNode.push(bare.ms);
      const pglitePort = await freePort();
      const barePglite = await timeToHealthy(process.execPath, bareServerOpeningPglite(withNodes, pglitePort), { ...process.env, DATA_DIR: '' }, `http://127.0.0.1:${pglitePort}/`);
      results.barePglite.push(barePglite.ms);
      results.cli.push(timeCli(['release', 'list'], withNodes));
    }
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: empty, API_PORT: String(port), NODE_API_PORT: String(await freePort()), NODE_PORT_RANGE: randomNodePortRange(), LOG_LEVEL: 'warn' };
    delete env.DATABASE_URL;
    results.rss0 = (await timeToHealthy('npm', ['start'], env, `http://127.0.0.1:${port}/healthz`)).rssMb;
  } finally {
    rmSync(withNodes, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
  return results;
}
