// Runs the service the way the README does (`npm start`) as a separate process group, with its
// own DATA_DIR and ports, plus the operator CLI against it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, randomNodePortRange } from './ports.ts';
import { isProcessAlive } from '../../src/platform/process-alive.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServiceProcess {
  env: NodeJS.ProcessEnv;
  base: string;
  child: ChildProcess;
  output(): string;
  /**
   * Waits until the output matches: /healthz answers before the ready line and the first-start
   * banner reach the pipe, so a test reading them right after start would race them.
   */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** The pid of the server process itself (npm start runs it as a child of npm). */
  serverPid(): number;
  cli(args: string[]): any;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function serviceEnv(dataDir: string, extra: Record<string, string> = {}) {
  const apiPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    API_PORT: String(apiPort),
    NODE_API_PORT: String(await freePort()),
    MTLS_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    // Tests poll and load the service through one token on purpose; the rate limit suite turns them on.
    API_RATE_LIMIT_PER_MINUTE: '0',
    API_USER_RATE_LIMIT_PER_MINUTE: '0',
    GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
    ...extra,
  };
  delete env.DATABASE_URL;
  if (extra.DATABASE_URL) env.DATABASE_URL = extra.DATABASE_URL;
  return env;
}

const PORT_VARIABLES = ['API_PORT', 'NODE_API_PORT', 'MTLS_PORT', 'METRICS_PORT'] as const;

/**
 * Starts `npm start` with `env` and waits until it is healthy. A port freePort() handed out can be
 * taken by another test file's listener before the service binds it: then the service is started
 * again on new ports, written into `env` itself so that a later restart with it uses them too.
 */
export async function startServiceProcess(env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServiceProcessOnce(env, timeoutMs);
    } catch (err) {
      const taken = PORT_VARIABLES.some((name) => (err as Error).message.includes(`127.0.0.1:${env[name]} is already in use`));
      if (!taken || attempt >= 5) throw err;
      for (const name of PORT_VARIABLES) env[name] = String(await freePort());
    }
  }
}

async function startServiceProcessOnce(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ServiceProcess> {
  const child = spawn('npm', ['start'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const base = `http://127.0.0.1:${env.API_PORT}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).status === 200) break;
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) {
      killGroup(child);
      throw new Error(`the service did not become healthy; output:\n${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    env,
    base,
    child,
    output: () => output,
    async waitForOutput(pattern, waitMs = 10_000) {
      const until = Date.now() + waitMs;
      while (!pattern.test(output)) {
        if (Date.now() > until) throw new Error(`the output never matched ${pattern}; output:\n${output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return output;
    },
    serverPid: () => JSON.parse(readFileSync(`${env.DATA_DIR}/rln-cloud.lock`, 'utf8')).pid,
    cli: (args) => runCli(env, args),
    async stop(signal = 'SIGTERM') {
      let server: number | undefined;
      try {
        server = JSON.parse(readFileSync(`${env.DATA_DIR}/rln-cloud.lock`, 'utf8')).pid;
      } catch {}
      killGroup(child, signal);
      await waitForExit(child, 15_000);
      killGroup(child, 'SIGKILL');
      // npm may exit before the server it started: wait for the server itself to let go of its
      // ports and DATA_DIR, as an operator restarting it would.
      const deadline = Date.now() + 15_000;
      while (server && isProcessAlive(server) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

export function runCli(env: NodeJS.ProcessEnv, args: string[]) {
  const r = spawnSync('npx', ['--no-install', 'rln-cloud', ...args, '--json'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000 });
  const lines = r.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line on stdout, got:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return JSON.parse(lines[0]!);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') {
  try {
    process.kill(-child.pid!, signal);
  } catch {}
}

async function waitForExit(child: ChildProcess, timeoutMs: number) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, timeoutMs))]);
}

/** Calls the service's management API with a bearer token. */
export async function callService(svc: ServiceProcess, token: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${svc.base}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as any };
}

/** Polls a node until `accept` says yes (by default: it has `status`), tolerating a service that is restarting. */
export async function waitForServiceNode(
  svc: ServiceProcess,
  token: string,
  nodeId: string,
  status: string,
  timeoutMs = 60_000,
  accept: (node: any) => boolean = (node) => node?.status === status,
) {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    try {
      last = (await callService(svc, token, `/api/nodes/${nodeId}`)).json.data;
      if (accept(last)) return last;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`node ${nodeId} did not reach ${status}; last ${JSON.stringify(last)}`);
}

/** A one-key unlock seal keyring for several replicas (a file UNLOCK_SEAL_KEY_FILE names must exist). */
export function sharedSealKeyFile(dir: string): string {
  const path = join(dir, 'unlock-seal.key');
  writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600 });
  return path;
}
