// Resident memory of the service started the way the README says, idle and after a few thousand
// mixed requests (what a fuzzer or a busy dashboard sends: valid calls, bad bodies, unknown
// tokens and paths, gateway calls, pages), beside a bare Fastify process given the same number of
// requests. Embedded default (PGlite) and PostgreSQL mode.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { repoRoot } from '../test/helpers/service-process.ts';
import { npmStartArgs, prepareDataDir } from './startup.ts';
import { rssMb } from './rss.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface MemoryFigures {
  idleMb: number;
  /** The highest sample while the requests ran. */
  peakMb: number;
  /** After the requests, once the process has been idle for SETTLE_MS. */
  afterMb: number;
  requests: number;
  /** Answers by status class, to show the mix really was mixed. */
  statuses: Record<string, number>;
}

/** V8 shrinks its heap after several seconds without work (its memory reducer); RSS follows. */
const SETTLE_MS = Number(process.env.BENCH_MEMORY_SETTLE_MS ?? 12_000);

/** The largest of the last samples once the process has been left alone for SETTLE_MS. */
async function settledRss(pid: number): Promise<number> {
  await sleep(SETTLE_MS);
  const samples: number[] = [];
  for (let i = 0; i < 10; i++, await sleep(100)) samples.push(rssMb(pid));
  return Math.max(...samples);
}

interface Target {
  api: string;
  gateway?: string;
  token?: string;
  nodeIds?: string[];
  /** Each node's `invoke_url` (the bearer gateway). */
  nodeUrls?: string[];
}

type Shot = { method: string; url: string; headers?: Record<string, string>; body?: string };

/** The i-th request of the mix: a deterministic cycle over the kinds of request a service sees. */
function shot(t: Target, i: number): Shot {
  const auth: Record<string, string> = t.token ? { authorization: `Bearer ${t.token}` } : {};
  const json = { 'content-type': 'application/json', ...auth };
  const node = t.nodeIds?.[i % (t.nodeIds.length || 1)] ?? 'none';
  const noise = randomBytes(12).toString('hex');
  switch (i % 16) {
    case 0: return { method: 'GET', url: `${t.api}/api/nodes`, headers: auth };
    case 1: return { method: 'GET', url: `${t.api}/api/nodes/${node}`, headers: auth };
    case 2: return { method: 'GET', url: `${t.api}/api/nodes/${node}/events?limit=20`, headers: auth };
    case 3: return { method: 'POST', url: `${t.api}/api/nodes`, headers: json, body: '{"name": "x", "network": ' }; // malformed JSON
    case 4: return { method: 'POST', url: `${t.api}/api/nodes`, headers: json, body: JSON.stringify({ name: 'x'.repeat(20_000), network: 'mainnet' }) };
    case 5: return { method: 'GET', url: `${t.api}/api/nodes`, headers: { authorization: `Bearer rln_${noise}` } }; // unknown token
    case 6: return { method: 'GET', url: `${t.api}/api/${noise}/${'a'.repeat(i % 500)}?q=${noise}`, headers: auth }; // unknown path
    case 7: return { method: 'PUT', url: `${t.api}/api/nodes/${node}/settings`, headers: json, body: JSON.stringify({ webhookUrl: `ftp://${noise}` }) };
    case 8: return { method: 'GET', url: `${t.api}/api/nodes/${noise}`, headers: auth }; // someone else's or no node
    case 9: return { method: 'GET', url: `${t.api}/api/tokens`, headers: auth };
    case 10: return { method: 'GET', url: `${t.api}/${i % 32 === 10 ? 'docs' : ''}` }; // web UI and docs pages
    case 11: return { method: 'GET', url: `${t.api}/api/nodes`, headers: { ...auth, 'x-padding': 'p'.repeat(6_000) } }; // large header
    case 12: return { method: 'POST', url: `${t.api}/api/nodes/${node}/start`, headers: json, body: `{"unexpected": "${noise}"}` };
    case 13: return t.nodeUrls?.length ? { method: 'GET', url: `${t.nodeUrls[i % t.nodeUrls.length]}nodeinfo`, headers: auth } : { method: 'GET', url: `${t.api}/api/nodes`, headers: auth };
    case 14: return t.gateway ? { method: 'POST', url: `${t.gateway}/${noise}/${noise}/unlock`, headers: { ...json, authorization: `Bearer rln_${noise}` }, body: '{"password":"x"}' } : { method: 'GET', url: `${t.api}/${noise}` };
    default: return { method: 'GET', url: `${t.api}/api/openapi.json` };
  }
}

/** Sends `count` requests of the mix, `concurrency` at a time; answers the count per status class. */
async function sendMix(t: Target, count: number, concurrency = 16): Promise<Record<string, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<string, number> = {};
  let next = 0;
  const one = (s: Shot) =>
    new Promise<number>((resolve) => {
      const req = request(s.url, { method: s.method, headers: s.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      });
      req.on('error', () => resolve(0));
      req.end(s.body);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const status = await one(shot(t, next++));
        const key = status === 0 ? 'failed' : `${Math.floor(status / 100)}xx`;
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return statuses;
}

async function measure(pid: number, target: Target, count: number): Promise<MemoryFigures> {
  const idleMb = await settledRss(pid);
  let peakMb = idleMb;
  let sampling = true;
  const sampler = (async () => {
    for (; sampling; await sleep(50)) peakMb = Math.max(peakMb, rssMb(pid));
  })();
  const statuses = await sendMix(target, count);
  sampling = false;
  await sampler;
  return { idleMb, peakMb, afterMb: await settledRss(pid), requests: count, statuses };
}

async function waitHealthy(url: string, child: ChildProcess) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
    if (child.exitCode !== null) throw new Error('the process exited while starting');
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {}
  }
  throw new Error(`${url} did not answer 200`);
}

function stop(child: ChildProcess) {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

/** The service as `npm start` runs it (scripts/start.mjs), without npm's own process in between. */
export async function benchServiceMemory(databaseUrl: string | undefined, count: number): Promise<MemoryFigures> {
  // Built beforehand: a stale bundle would be rebuilt inside the measured process.
  if (spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: repoRoot, stdio: 'inherit' }).status !== 0) throw new Error('npm run build failed');
  const dataDir = await prepareDataDir(100, databaseUrl);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    API_PORT: String(await freePort()),
    NODE_API_PORT: String(await freePort()),
    MTLS_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    LOG_LEVEL: 'warn',
    // The mix is one client; the limits would turn most of it into 429s.
    API_RATE_LIMIT_PER_MINUTE: '0',
    API_USER_RATE_LIMIT_PER_MINUTE: '0',
    GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const child = spawn(process.execPath, npmStartArgs(), { cwd: repoRoot, env, stdio: 'ignore' });
  try {
    const api = `http://127.0.0.1:${env.API_PORT}`;
    await waitHealthy(`${api}/healthz`, child);
    const token = readFileSync(join(dataDir, 'bench-token'), 'utf8').trim();
    const { nodes } = await fetch(`${api}/api/nodes`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json() as Promise<{ nodes: Array<{ id: string; invoke_url: string }> }>);
    const target: Target = { api, gateway: `http://127.0.0.1:${env.NODE_API_PORT}`, token, nodeIds: nodes.map((n) => n.id), nodeUrls: nodes.map((n) => n.invoke_url) };
    return await measure(child.pid!, target, count);
  } finally {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The floor: Fastify with one JSON route and a schema'd POST, nothing else, given the same count. */
export async function benchBareFastify(count: number): Promise<MemoryFigures> {
  const port = await freePort();
  const source = `
    const app = require('fastify')({ logger: false });
    app.get('/*', async () => ({ nodes: [] }));
    app.post('/*', { schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 100 } } } } }, async (req) => req.body);
    app.put('/*', async () => ({}));
    app.listen({ port: ${port}, host: '127.0.0.1' });`;
  const child = spawn(process.execPath, ['-e', source], { cwd: repoRoot, stdio: 'ignore' });
  try {
    await waitHealthy(`http://127.0.0.1:${port}/`, child);
    return await measure(child.pid!, { api: `http://127.0.0.1:${port}` }, count);
  } finally {
    await stop(child);
  }
}
