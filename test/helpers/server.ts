// Starts the whole service in-process on real sockets, with its own DATA_DIR, ports and database,
// and offers small helpers to call it the way a client would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger, type Logger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/app.ts';
import type { Plan } from '../../src/domain/plans.ts';
import { upsertPlan } from '../../src/db/plans.ts';
import type { NodeRuntime } from '../../src/runtime/types.ts';

/**
 * The plan test users are on unless a test names one: no limits and no automatic upgrades (what
 * `starter` meant before plans had limits), so suites about other things are not bounded by the
 * original's Starter plan (one node). The plans' limits are tested where they are the subject.
 */
export const UNLIMITED_TEST_PLAN = 'test-unlimited';
import { createTestDatabase } from './database.ts';
import { freePort, randomNodePortRange } from './ports.ts';

export interface TestUser {
  id: string;
  email: string;
  token: string;
  tokenId: string;
}

export interface CallResult<T = any> {
  status: number;
  json: T;
  text: string;
  headers: Headers;
}

export interface TestServer {
  config: Config;
  server: RunningServer;
  base: string;
  createUser(plan?: Plan, email?: string): Promise<TestUser>;
  call<T = any>(path: string, opts?: CallOptions): Promise<CallResult<T>>;
  waitForStatus(user: TestUser, nodeId: string, status: string, timeoutMs?: number): Promise<any>;
  stop(): Promise<void>;
}

export interface CallOptions {
  method?: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

let userCounter = 0;

/** A test server's configuration: its own DATA_DIR, free ports, a private node port range, fast loops. */
export async function testConfig(dataDir: string, databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<Config> {
  const [apiPort, nodeApiPort, mtlsPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  return loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(apiPort),
    NODE_API_PORT: String(nodeApiPort),
    MTLS_PORT: String(mtlsPort),
    METRICS_PORT: String(metricsPort),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    JOB_POLL_INTERVAL_MS: '200',
    RECONCILE_INTERVAL_MS: '1000',
    // Tests poll and hammer on purpose; the rate limit suite turns the limits on itself.
    API_RATE_LIMIT_PER_MINUTE: '0',
    API_USER_RATE_LIMIT_PER_MINUTE: '0',
    GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
    DATABASE_URL: databaseUrl,
    ...env,
  });
}

/** Calls the management API at `base` the way a client would. */
export function apiCaller(base: string) {
  return async <T = any>(path: string, opts: CallOptions = {}): Promise<CallResult<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${base}${path}`, { method: opts.method ?? 'GET', headers, body });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, json, text, headers: res.headers };
  };
}

/**
 * `parts.runtime`: a runtime of the test's own (e.g. the in-memory one) instead of the configured one;
 * `parts.log`: a logger of the test's own (to read what the service logs) instead of a silent one.
 */
export async function startTestServer(env: Record<string, string> = {}, parts: { runtime?: NodeRuntime; log?: Logger } = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-test-'));
  const database = await createTestDatabase();
  const configure = () => testConfig(dataDir, database.url, env);
  // A free port can be taken by another process between freePort() and listen(): try new ones.
  let config = await configure();
  let server: RunningServer;
  for (let attempt = 1; ; attempt++) {
    try {
      server = await startServer(config, parts.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'), undefined, { runtime: parts.runtime });
      await upsertPlan(server.db, UNLIMITED_TEST_PLAN, { maxNodes: null, apiCallsPerMonth: null, maxUsers: null, autoUpgrade: false });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5 || env.API_PORT) throw err;
      config = await configure();
    }
  }
  const base = config.publicUrl;

  const call = apiCaller(base);

  return {
    config,
    server,
    base,
    call,
    async createUser(plan = UNLIMITED_TEST_PLAN, email = `user${++userCounter}-${Date.now()}@example.com`) {
      const user = await server.services.accounts.createUser({ email, plan });
      const token = await server.services.accounts.createToken(email, 'test');
      return { id: user.id, email, token: token.token, tokenId: token.id };
    },
    async waitForStatus(user, nodeId, status, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last: any;
      while (Date.now() < deadline) {
        last = (await call(`/api/nodes/${nodeId}`, { token: user.token })).json?.data;
        if (last?.status === status) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`node ${nodeId} did not reach ${status} within ${timeoutMs} ms; last seen ${JSON.stringify(last)}`);
    },
    async stop() {
      await server.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
