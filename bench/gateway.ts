// GET /nodeinfo of one unlocked devnode daemon (started by the service) seven ways, side by side in
// one run: straight to the node, through nginx (a keep-alive reverse proxy to the same node, the
// reference a user would otherwise put in front), through a bare node:http proxy (agent and pipe,
// what the gateways were built on before they wrote to nodes themselves), through the bearer
// gateway forwarding through undici's dispatch instead (undici-forwarding.ts), through the bearer
// gateway with API call metering off and on (the service's own), and through the mutual-TLS gateway (kept-alive connections, client certificate issued by
// the service's API). Each proxy's own CPU per request is set against nginx's, with the aims.
// Also new mTLS handshakes per second, the gateway against a bare node:https server with the same
// certificates. The service runs in this process (PGlite); the load generator runs in its own
// process (bench/gateway-load.ts) so it never shares the gateway's event loop. The targets are
// measured in alternating rounds so that noise from others on the machine spreads over all.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer } from '../src/app.ts';
import { CertificateAuthority } from '../src/pki/certificate-authority.ts';
import { createBearerGateway } from '../src/gateway/gateway-server.ts';
import { NodeAccess } from '../src/gateway/node-access.ts';
import { RateLimiter } from '../src/http/rate-limit.ts';
import { loadUndiciForwarding } from './undici-forwarding.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import type { LoadResult } from './load.ts';
import type { LoadCommand, LoadReply, LoadTarget } from './gateway-load.ts';
import { LOAD_GENERATOR } from './raw-http-load.ts';

export type TargetName = 'direct' | 'nginx' | 'nodeproxy' | 'undici' | 'unmetered' | 'bearer' | 'mtls';

/** CPU time per request (µs) of each process taking part, from /proc, over the measured rounds. */
export type CpuPerRequest = { service: number; node: number; nginx: number; loadgen: number };

export interface GatewayFigures {
  /** At 50 connections. */
  cpu: Partial<Record<TargetName, CpuPerRequest>>;
  /** Per target: 50 connections, and 1 connection (aggregated over the rounds). */
  c50: Partial<Record<TargetName, LoadResult>>;
  c1: Partial<Record<TargetName, LoadResult>>;
  handshakes: { gateway: LoadResult; bare: LoadResult };
  nginx: { version?: string; skipped?: string };
  /** The bearer gateway forwarding through undici's dispatch (undici-forwarding.ts). */
  undici: { commit?: string; skipped?: string };
  rounds: number;
}

const PASSWORD = 'bench-node-password';

/** Rounds x targets, each round a slice of the duration; the median p50/p99 and overall rate. */
function combine(parts: LoadResult[]): LoadResult {
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const requests = parts.reduce((s, p) => s + p.requests, 0);
  const seconds = parts.reduce((s, p) => s + p.requests / p.perSecond, 0);
  return { requests, perSecond: requests / seconds, p50Ms: med(parts.map((p) => p.p50Ms)), p99Ms: med(parts.map((p) => p.p99Ms)) };
}

const TICK_MS = 1000 / 100; // CLK_TCK
/** User + system CPU milliseconds of a process (all its threads), 0 if it is not there. */
function cpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

function startLoadProcess() {
  const child = fork(new URL('./gateway-load.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const run = (cmd: LoadCommand) =>
    new Promise<LoadResult>((resolve, reject) => {
      const onExit = () => reject(new Error('the load generator exited'));
      child.once('exit', onExit);
      child.once('message', (reply: LoadReply) => {
        child.off('exit', onExit);
        if (reply.ok) resolve(reply.result);
        else reject(new Error(reply.error));
      });
      child.send(cmd);
    });
  return { run, pid: child.pid, stop: () => child.kill() };
}

/** nginx from the Debian package as a child process on an unprivileged port, or why not. */
async function startNginx(dir: string, nodePort: number): Promise<{ url: string; version: string; child: ChildProcess; worker: number | undefined } | { skipped: string }> {
  const bin = ['/usr/sbin/nginx', 'nginx'].find((b) => spawnSync(b, ['-v']).status === 0);
  if (!bin) return { skipped: 'nginx is not installed (apt-get install -y nginx)' };
  const version = spawnSync(bin, ['-v'], { encoding: 'utf8' }).stderr.trim().replace(/^nginx version: /, '');
  const port = await freePort();
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`;
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  keepalive_requests 1000000;
  upstream node {
    server 127.0.0.1:${nodePort};
    keepalive 64;
    keepalive_requests 1000000;
    keepalive_timeout 4s;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://node;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1:${nodePort};
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`,
  );
  const child = spawn(bin, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return { skipped: `nginx exited: ${stderr.trim() || readFileSync(join(dir, 'error.log'), 'utf8').trim()}` };
    try {
      // The node's own answer through nginx (401 without a Biscuit: issue #40), not nginx's 502.
      if ((await fetch(`http://127.0.0.1:${port}/nodeinfo`)).status === 401) {
        const worker = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]) || undefined;
        return { url: `http://127.0.0.1:${port}`, version, child, worker };
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  return { skipped: `nginx did not answer within 5 s: ${stderr.trim()}` };
}

export async function benchGateway(durationMs: number, rounds = 3): Promise<GatewayFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-gw-'));
  // The CA and the gateway's server certificate as files, so the bare TLS server uses the same.
  const pki = join(dataDir, 'bench-pki');
  mkdirSync(pki, { mode: 0o700 });
  const created = await CertificateAuthority.create('bench CA');
  const serverCert = await created.ca.issueServerCertificate(['localhost', '127.0.0.1'], 1);
  const files = { caCert: join(pki, 'ca.pem'), caKey: join(pki, 'ca.key'), cert: join(pki, 'server.pem'), key: join(pki, 'server.key') };
  writeFileSync(files.caCert, created.certificatePem);
  writeFileSync(files.caKey, created.privateKeyPem, { mode: 0o600 });
  writeFileSync(files.cert, `${serverCert.certificatePem}\n${created.certificatePem}`);
  writeFileSync(files.key, serverCert.privateKeyPem, { mode: 0o600 });

  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_API_PORT: String(await freePort()),
    MTLS_PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    LOG_LEVEL: 'silent',
    CA_CERT_FILE: files.caCert,
    CA_KEY_FILE: files.caKey,
    MTLS_CERT_FILE: files.cert,
    MTLS_KEY_FILE: files.key,
    // The limiter runs on every request, as in production, but one token's load never reaches it.
    GATEWAY_RATE_LIMIT_PER_MINUTE: '100000000',
  });
  const server = await startServer(config, createLogger('silent'));
  const load = startLoadProcess();
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  let bare: https.Server | undefined;
  let nodeProxy: http.Server | undefined;
  let undiciGateway: http.Server | undefined;
  let unmeteredGateway: http.Server | undefined;
  let undici: Awaited<ReturnType<typeof loadUndiciForwarding>> | undefined;
  try {
    const user = await server.services.accounts.createUser({ email: 'bench-gw@example.com', plan: 'scale' });
    const { token } = await server.services.accounts.createToken('bench-gw@example.com');
    const api = async (path: string, init: { method?: string; body?: unknown } = {}) => {
      const res = await fetch(`${config.publicUrl}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
        body: init.body ? JSON.stringify(init.body) : undefined,
      });
      const json: any = await res.json();
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const nodeId: string = (await api('/api/nodes', { method: 'POST', body: { name: 'bench', network: 'regtest' } })).data.nodeId;
    const deadline = Date.now() + 60_000;
    while ((await api(`/api/nodes/${nodeId}`)).data.status !== 'RUNNING') {
      if (Date.now() > deadline) throw new Error('the node did not reach RUNNING within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const nodeBase = `${config.nodeApiUrl}/${user.id}/${nodeId}`;
    for (const route of ['init', 'unlock']) {
      const res = await fetch(`${nodeBase}/${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ password: PASSWORD }),
      });
      if (!res.ok) throw new Error(`${route} through the gateway: ${res.status} ${await res.text()}`);
    }
    const cert = await api(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST' });
    const clientTls = { cert: cert.certificate as string, key: cert.privateKey as string, ca: cert.certificateChain as string };
    const restPort = (await server.db.query<{ rest_port: number }>('SELECT rest_port FROM nodes WHERE id = $1', [nodeId]))[0]!.rest_port;

    // The node runs with RLN's authentication (issue #40): the rows that reach it without a gateway
    // carry the admin Biscuit the service itself sends it.
    const nodeAuthorization = { authorization: (await server.nodeCalls.bearers.authorization(nodeId, 'admin'))! };
    nginx = await startNginx(join(dataDir, 'nginx'), restPort);
    // The floor for any proxy written on node:http: a keep-alive agent and a pipe, nothing else.
    // Idle connections close at 4 s, before the node's own 5 s could close one under a request (as
    // nginx's keepalive_timeout below and the gateways' pool): without it a run could fail on a
    // "socket hang up" that says nothing about the proxy's cost.
    const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 128, timeout: 4_000 });
    nodeProxy = http.createServer((req, res) => {
      const up = http.request({ host: '127.0.0.1', port: restPort, method: req.method, path: req.url, headers: req.headers, agent: proxyAgent }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    const nodeProxyPort = await freePort();
    await new Promise<void>((resolve) => nodeProxy!.listen(nodeProxyPort, '127.0.0.1', resolve));

    // The same bearer gateway (access checks, rate limiter, metrics, unlock) forwarding through
    // undici's dispatch: the two rows differ only in how a request reaches the node.
    const settings = config.nodeAccess;
    undici = await loadUndiciForwarding({ timeoutMs: settings.nodeTimeoutMs, maxRequestBytes: settings.maxRequestBytes, maxResponseBytes: settings.maxResponseBytes });
    const undiciPort = await freePort();
    if ('asClient' in undici) {
      undiciGateway = createBearerGateway({
        access: new NodeAccess({ db: server.db, accounts: server.services.accounts, runtime: server.runtime }),
        rln: undici.asClient(server.nodeCalls.rln),
        nodePaths: server.nodeCalls.nodePaths,
        bearers: server.nodeCalls.bearers,
        rateLimiter: new RateLimiter({ name: 'gateway-undici', limit: 100_000_000, windowSeconds: 60 }),
        clientTimeoutMs: settings.clientTimeoutMs,
        log: createLogger('silent'),
        metrics: server.metrics,
      });
      await new Promise<void>((resolve) => undiciGateway!.listen(undiciPort, '127.0.0.1', resolve));
    }

    // The same bearer gateway with API call metering off (no meter): beside the service's own, which
    // counts every request (usage/api-call-meter.ts), it is the cost of metering (issue #27: on at
    // least 0.97 of off).
    unmeteredGateway = createBearerGateway({
      access: new NodeAccess({ db: server.db, accounts: server.services.accounts, runtime: server.runtime }),
      rln: server.nodeCalls.rln,
      nodePaths: server.nodeCalls.nodePaths,
      bearers: server.nodeCalls.bearers,
      rateLimiter: new RateLimiter({ name: 'gateway-unmetered', limit: 100_000_000, windowSeconds: 60 }),
      clientTimeoutMs: settings.clientTimeoutMs,
      log: createLogger('silent'),
      metrics: server.metrics,
    });
    const unmeteredPort = await freePort();
    await new Promise<void>((resolve) => unmeteredGateway!.listen(unmeteredPort, '127.0.0.1', resolve));

    // BENCH_GATEWAY_TARGETS=bearer,mtls measures only those (e.g. under --cpu-prof).
    const only = process.env.BENCH_GATEWAY_TARGETS?.split(',');
    const targets = ((): Array<[TargetName, LoadTarget]> => [
      ['direct', { name: 'direct', url: `http://127.0.0.1:${restPort}/nodeinfo`, headers: nodeAuthorization }],
      ...('url' in nginx ? [['nginx', { name: 'nginx', url: `${nginx.url}/nodeinfo`, headers: nodeAuthorization }] as [TargetName, LoadTarget]] : []),
      ['nodeproxy', { name: 'nodeproxy', url: `http://127.0.0.1:${nodeProxyPort}/nodeinfo`, headers: nodeAuthorization }],
      ...(undiciGateway
        ? [['undici', { name: 'undici', url: `http://127.0.0.1:${undiciPort}/${user.id}/${nodeId}/nodeinfo`, headers: { authorization: `Bearer ${token}` } }] as [TargetName, LoadTarget]]
        : []),
      ['unmetered', { name: 'unmetered', url: `http://127.0.0.1:${unmeteredPort}/${user.id}/${nodeId}/nodeinfo`, headers: { authorization: `Bearer ${token}` } }],
      ['bearer', { name: 'bearer', url: `${nodeBase}/nodeinfo`, headers: { authorization: `Bearer ${token}` } }],
      ['mtls', { name: 'mtls', url: `${config.userNodeUrl}/nodes/${user.id}/${nodeId}/nodeinfo`, headers: {}, tls: clientTls }],
    ])().filter(([name]) => !only || only.includes(name));

    // The bare TLS server: same key, certificate chain and client CA as the gateway, no handler work.
    bare = https.createServer(
      { key: readFileSync(files.key), cert: readFileSync(files.cert), ca: [created.certificatePem], requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
      (_req, res) => res.end('{}'),
    );
    const barePort = await freePort();
    await new Promise<void>((resolve) => bare!.listen(barePort, '127.0.0.1', resolve));

    // Warm up every path (JIT, pooled connections, query plans).
    for (const [, target] of targets) {
      await load.run({ kind: 'requests', target, connections: 50, durationMs: 1000 });
      await load.run({ kind: 'requests', target, connections: 1, durationMs: 300 });
    }
    for (const port of [config.mtlsPort, barePort]) await load.run({ kind: 'handshakes', port, tls: clientTls, concurrency: 8, durationMs: 500 });

    const slice = Math.max(500, Math.round(durationMs / rounds));
    const nodePid = (await server.runtime.status(nodeId)).pid;
    const nginxPid = 'worker' in nginx ? nginx.worker : undefined;
    const cpuNow = () => ({ service: cpuMs(process.pid), node: cpuMs(nodePid), nginx: cpuMs(nginxPid), loadgen: cpuMs(load.pid) });
    const cpuSum = new Map<TargetName, { requests: number; cpu: CpuPerRequest }>();
    const parts = { c50: new Map<TargetName, LoadResult[]>(), c1: new Map<TargetName, LoadResult[]>(), hsGateway: [] as LoadResult[], hsBare: [] as LoadResult[] };
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round so no target always follows the same neighbour.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const [connections, into] of [[50, parts.c50], [1, parts.c1]] as const) {
        for (const [name, target] of order) {
          await load.run({ kind: 'open', target, connections });
          const before = cpuNow();
          const r = await load.run({ kind: 'requests', target, connections, durationMs: slice });
          if (connections === 50) {
            const after = cpuNow();
            const acc = cpuSum.get(name) ?? { requests: 0, cpu: { service: 0, node: 0, nginx: 0, loadgen: 0 } };
            acc.requests += r.requests;
            for (const k of Object.keys(acc.cpu) as Array<keyof CpuPerRequest>) acc.cpu[k] += after[k] - before[k];
            cpuSum.set(name, acc);
          }
          into.set(name, [...(into.get(name) ?? []), r]);
        }
      }
      const hs = round % 2 === 0 ? ([[config.mtlsPort, parts.hsGateway], [barePort, parts.hsBare]] as const) : ([[barePort, parts.hsBare], [config.mtlsPort, parts.hsGateway]] as const);
      for (const [port, into] of hs) into.push(await load.run({ kind: 'handshakes', port, tls: clientTls, concurrency: 8, durationMs: slice }));
    }
    const figures = (m: Map<TargetName, LoadResult[]>) => Object.fromEntries([...m].map(([k, v]) => [k, combine(v)]));
    return {
      c50: figures(parts.c50),
      c1: figures(parts.c1),
      cpu: Object.fromEntries(
        [...cpuSum].map(([name, { requests, cpu }]) => [name, Object.fromEntries(Object.entries(cpu).map(([k, ms]) => [k, (ms * 1000) / requests])) as CpuPerRequest]),
      ),
      handshakes: { gateway: combine(parts.hsGateway), bare: combine(parts.hsBare) },
      nginx: 'url' in nginx ? { version: nginx.version } : { skipped: nginx.skipped },
      undici: 'commit' in undici ? { commit: undici.commit } : { skipped: undici.skipped },
      rounds,
    };
  } finally {
    load.stop();
    if (nginx && 'child' in nginx) {
      const child = nginx.child;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    if (undiciGateway) {
      undiciGateway.closeAllConnections();
      await new Promise((r) => undiciGateway!.close(r));
    }
    if (undici && 'close' in undici) await undici.close();
    if (unmeteredGateway) {
      unmeteredGateway.closeAllConnections();
      await new Promise((r) => unmeteredGateway!.close(r));
    }
    if (nodeProxy) {
      nodeProxy.closeAllConnections();
      await new Promise((r) => nodeProxy!.close(r));
    }
    if (bare) {
      bare.closeAllConnections();
      await new Promise((r) => bare!.close(r));
    }
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Prints the section of `npm run bench` (also alone: BENCH_ONLY=gateway or `npm run bench -- gateway`). */
export async function printGatewaySection(durationMs: number) {
  const f = (n: number | undefined, d = 1) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const rounds = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 3);
  console.log(`\n## Node access gateways: GET /nodeinfo of one unlocked devnode (PGlite, service in-process, load generator in its own process, ${rounds} alternating rounds)`);
  console.log(
    LOAD_GENERATOR === 'raw'
      ? 'load generator: raw keep-alive sockets writing one fixed request, answers framed by Content-Length or chunked (bench/raw-http-load.ts), connections opened before each measured run; BENCH_GATEWAY_LOADGEN=agent for the node:http agent client'
      : 'load generator: node:http/https keep-alive agents (BENCH_GATEWAY_LOADGEN=agent), connections opened as a run goes',
  );
  let g: GatewayFigures;
  try {
    g = await benchGateway(durationMs, rounds);
  } catch (err) {
    console.log(`skipped: ${(err as Error).message}`);
    return;
  }
  const labels: Record<TargetName, string> = {
    direct: 'straight to the node',
    nodeproxy: 'bare node:http proxy (agent + pipe, in the service process)',
    nginx: `${g.nginx.version ?? "nginx"} (1 worker, keep-alive upstream)`,
    undici: `bearer gateway forwarding through undici's dispatch (rln/forward.ts at ${g.undici.commit ?? 'not loaded'})`,
    unmetered: 'bearer gateway, API call metering off',
    bearer: 'bearer gateway (forwarding on rln/forwarding/, metering on)',
    mtls: 'mTLS gateway (kept-alive)',
  };
  console.log('| path | req/s, 50 conn | / direct | / nginx | p50 ms, 1 conn | p99 ms, 1 conn | added ms vs direct | added ms vs nginx |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const name of ['direct', 'nginx', 'nodeproxy', 'undici', 'unmetered', 'bearer', 'mtls'] as const) {
    const t = g.c50[name];
    const one = g.c1[name];
    if (!t || !one) {
      console.log(`| ${labels[name]} | skipped: ${(name === 'undici' ? g.undici.skipped : g.nginx.skipped) ?? 'not measured'} | | | | | | |`);
      continue;
    }
    const ratio = (base: TargetName) => f(g.c50[base] ? t.perSecond / g.c50[base]!.perSecond : undefined, 2);
    const added = (base: TargetName) => f(g.c1[base] ? one.p50Ms - g.c1[base]!.p50Ms : undefined, 3);
    console.log(`| ${labels[name]} | ${f(t.perSecond, 0)} | ${ratio('direct')} | ${ratio('nginx')} | ${f(one.p50Ms, 3)} | ${f(one.p99Ms, 3)} | ${added('direct')} | ${added('nginx')} |`);
  }
  console.log("\n| CPU µs per request at 50 conn (from /proc) | service process (gateway; collects the node's log in every row) | node daemon | nginx worker | load generator | proxy's own: service - direct's service (nginx: + its worker) | / nginx's own |");
  console.log('|---|---|---|---|---|---|---|');
  for (const name of ['direct', 'nginx', 'nodeproxy', 'undici', 'unmetered', 'bearer', 'mtls'] as const) {
    const c = g.cpu[name];
    if (!c) continue;
    const own = ownCpu(g, name);
    const nginxOwn = ownCpu(g, 'nginx');
    const vsNginx = name !== 'direct' && own !== undefined && nginxOwn ? f(own / nginxOwn, 2) : '';
    console.log(`| ${labels[name]} | ${f(c.service, 0)} | ${f(c.node, 0)} | ${name === 'nginx' ? f(c.nginx, 0) : ''} | ${f(c.loadgen, 0)} | ${name === 'direct' ? '' : f(own, 0)} | ${vsNginx} |`);
  }
  printAims(g, labels);
  console.log('\n| new mTLS handshakes, 8 concurrent, no resumption | /s | / bare |');
  console.log('|---|---|---|');
  console.log(`| mTLS gateway | ${f(g.handshakes.gateway.perSecond, 0)} | ${f(g.handshakes.gateway.perSecond / g.handshakes.bare.perSecond, 2)} |`);
  console.log(`| baseline: bare node:https server, same certificates | ${f(g.handshakes.bare.perSecond, 0)} | |`);
}

/**
 * A proxy's own CPU per request: the service process's, less what that process spends in the
 * direct row (collecting the node's log, which it does in every row); for nginx, its worker's
 * (plus the service process's difference, about 0).
 */
function ownCpu(g: GatewayFigures, name: TargetName): number | undefined {
  const c = g.cpu[name];
  const direct = g.cpu.direct;
  if (!c || !direct) return undefined;
  return c.service - direct.service + (name === 'nginx' ? c.nginx : 0);
}

/** The issue's aims for the gateways, each beside the bare node:http proxy's figure (the old floor). */
function printAims(g: GatewayFigures, labels: Record<TargetName, string>) {
  const f = (n: number | undefined, d: number) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const rate = (name: TargetName) => g.c50[name]?.perSecond;
  const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? a / b : undefined);
  const added = (name: TargetName) => (g.c1[name] && g.c1.nginx ? g.c1[name]!.p50Ms - g.c1.nginx.p50Ms : undefined);
  type Aim = { what: string; figure: (name: TargetName) => number | undefined; met: (x: number) => boolean; digits: number; paths: TargetName[]; floor: boolean };
  const aims: Aim[] = [
    { what: "own CPU per request / nginx's, at most 2", figure: (n) => ratio(ownCpu(g, n), ownCpu(g, 'nginx')), met: (x) => x <= 2, digits: 2, paths: ['bearer', 'mtls'], floor: true },
    { what: "req/s at 50 conn / nginx's, at least 0.85", figure: (n) => ratio(rate(n), rate('nginx')), met: (x) => x >= 0.85, digits: 2, paths: ['bearer'], floor: true },
    { what: "p50 at 1 conn, ms added over nginx's, under 0.1", figure: added, met: (x) => x < 0.1, digits: 3, paths: ['bearer', 'mtls'], floor: true },
    // Against the bearer gateway: the bare proxy has no counterpart.
    { what: "req/s at 50 conn / the bearer gateway's, at least 0.9", figure: (n) => ratio(rate(n), rate('bearer')), met: (x) => x >= 0.9, digits: 2, paths: ['mtls'], floor: false },
    // Issue #27: metering every gateway request costs at most 3% of the bearer gateway's throughput.
    { what: "API call metering: req/s at 50 conn, metering on / off, at least 0.97 (issue #27)", figure: (n) => ratio(rate(n), rate('unmetered')), met: (x) => x >= 0.97, digits: 3, paths: ['bearer'], floor: false },
    // Issue #26: forwarding through undici only if it costs at most 10% of the bearer gateway's
    // throughput; "met" here means undici would do.
    {
      what: "forwarding through undici: req/s at 50 conn / the hand-written path's, at least 0.9 to forward through undici (issue #26)",
      figure: (n) => ratio(rate(n), rate('bearer')),
      met: (x) => x >= 0.9,
      digits: 2,
      paths: ['undici'],
      floor: false,
    },
  ];
  console.log('\n| aim | path | figure | bare node:http proxy (the old floor) | |');
  console.log('|---|---|---|---|---|');
  for (const aim of aims) {
    for (const name of aim.paths) {
      const x = aim.figure(name);
      const floor = aim.floor ? f(aim.figure('nodeproxy'), aim.digits) : '';
      console.log(`| ${aim.what} | ${labels[name]} | ${f(x, aim.digits)} | ${floor} | ${x === undefined ? 'not measured' : aim.met(x) ? 'met' : 'missed'} |`);
    }
  }
}
