// The Prometheus metrics through real HTTP: scraped from METRICS_PORT before and after a known
// sequence of operations (a node created, gateway calls through both gateways, webhook deliveries
// with one retry, a job that cannot be read, two backups), and every counter checked to have moved
// by exactly that much, and no other series of it at all. Plus Prometheus' naming rules for every
// metric, and a listener that serves nothing but GET /metrics, on its own port only.
import { createServer } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { startMetricsListener } from '../../src/metrics/metrics-listener.ts';
import { insertJob } from '../../src/db/jobs.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { movements, parseExposition, series, type Scrape } from '../helpers/metrics.ts';
import { rawRequest, tlsRequest, type ClientCredentials } from '../gateway/gateway-client.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { backUp, initWallet, PASSWORD } from '../backups/backup-helpers.ts';

/** The counters (and histogram counts) the sequence moves, each checked series by series. */
const COUNTED = [
  'rlncloud_builds_total',
  'rlncloud_build_duration_seconds_count',
  'rlncloud_jobs_failed_total',
  'rlncloud_webhook_deliveries_total',
  'rlncloud_webhook_delivery_duration_seconds_count',
  'rlncloud_gateway_requests_total',
  'rlncloud_gateway_request_duration_seconds_count',
  'rlncloud_backups_total',
  'rlncloud_backup_duration_seconds_count',
];

/** Every metric of the service (process metrics aside); the pool's only on PostgreSQL. */
const SERVICE_METRICS = [
  'rlncloud_builds_total',
  'rlncloud_build_duration_seconds',
  'rlncloud_jobs_queued',
  'rlncloud_jobs_running',
  'rlncloud_jobs_failed_total',
  'rlncloud_webhook_deliveries_total',
  'rlncloud_webhook_delivery_duration_seconds',
  'rlncloud_gateway_requests_total',
  'rlncloud_gateway_request_duration_seconds',
  'rlncloud_rollouts_in_progress',
  'rlncloud_rollouts',
  'rlncloud_webhook_deliveries_unfinished',
  'rlncloud_node_ports',
  'rlncloud_nodes',
  'rlncloud_backups_total',
  'rlncloud_backup_duration_seconds',
  'rlncloud_api_calls_total',
  'rlncloud_audit_record_failures_total',
  'rlncloud_db_query_duration_seconds',
  'rlncloud_api_request_duration_seconds',
  'rlncloud_reconcile_last_pass_timestamp_seconds',
  'rlncloud_certificate_expiry_seconds',
];
const POOL_METRICS = ['rlncloud_db_pool_connections', 'rlncloud_db_pool_idle_connections', 'rlncloud_db_pool_waiting_requests'];

async function eventually(check: () => Promise<void>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe(`metrics on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let receiver: Receiver;
  const metricsUrl = () => `http://127.0.0.1:${t.config.metricsPort}`;

  const scrape = async (): Promise<Scrape & { contentType: string | null }> => {
    const res = await fetch(`${metricsUrl()}/metrics`);
    expect(res.status).toBe(200);
    return { ...parseExposition(await res.text()), contentType: res.headers.get('content-type') };
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,100ms,200ms,300ms' });
    ({ alice } = await createTenants(t));
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('serves every metric in the text format, named by the rules (prefix, base units, _total, no per-node or per-user label)', async () => {
    const s = await scrape();
    expect(s.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const names = [...s.types.keys()];
    const expected = [...SERVICE_METRICS, ...(databaseLabel() === 'PostgreSQL' ? POOL_METRICS : [])];
    expect(names).toEqual(expect.arrayContaining(expected));
    if (databaseLabel() === 'PGlite') for (const pool of POOL_METRICS) expect(names).not.toContain(pool);
    // Process metrics, prom-client's defaults under the prefix.
    expect(names).toEqual(expect.arrayContaining(['rlncloud_process_cpu_seconds_total', 'rlncloud_process_resident_memory_bytes', 'rlncloud_nodejs_eventloop_lag_seconds', 'rlncloud_nodejs_heap_size_used_bytes']));

    for (const [name, type] of s.types) {
      expect(name, name).toMatch(/^rlncloud_[a-z0-9_]+$/);
      if (type === 'counter') expect(name, `${name} is a counter`).toMatch(/_total$/);
      else expect(name, `${name} is a ${type}, not a counter`).not.toMatch(/_total$/);
      // Durations and latencies in seconds, the base unit.
      if (/duration|latency|lag|_time|_ms|millis/.test(name)) expect(name, `${name} measures time`).toMatch(/_seconds(_total)?$/);
      for (const label of s.labelNames.get(name) ?? []) {
        expect(label, `${name} labelled ${label}`).not.toMatch(/^(node|user)(_?id)?$|^node_?id|^user_?id|token|email/i);
      }
    }
    // The labels each service metric is broken down by, and nothing else.
    expect([...s.labelNames.get('rlncloud_builds_total')!].sort()).toEqual(['action', 'result']);
    expect([...s.labelNames.get('rlncloud_gateway_requests_total')!].sort()).toEqual(['gateway', 'status_class']);
    expect([...s.labelNames.get('rlncloud_webhook_deliveries_total')!]).toEqual(['result']);
    expect([...s.labelNames.get('rlncloud_nodes')!]).toEqual(['status']);
  });

  it('moves every counter by exactly what a known sequence of operations did', async () => {
    const before = await scrape();
    const queryCountBefore = before.samples.get('rlncloud_db_query_duration_seconds_count')!;

    // A node with a webhook URL: one create build, its lifecycle events delivered.
    const [nodeId] = await createNodes(t, alice, [{ name: 'counted', settings: { webhookUrl: receiver.url } }]);
    await receiver.waitFor((all) => all.some((w) => w.json.details?.status === 'RUNNING'));

    // The gateways: the node's own 403 (locked) through both, a 404 for a node that does not exist,
    // and the status document the bearer gateway answers itself.
    const auth = { authorization: `Bearer ${alice.token}` };
    expect((await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/nodeinfo`, { headers: auth })).status).toBe(403);
    expect((await rawRequest(t.config.nodeApiUrl, `/${alice.id}/nd_missing/nodeinfo`, { headers: auth })).status).toBe(404);
    expect((await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}`, { headers: auth })).status).toBe(200);
    const cert = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token });
    expect(cert.status, cert.text).toBe(200);
    const creds = cert.json as ClientCredentials;
    const viaMtls = await tlsRequest(t.config.userNodeUrl, `/nodes/${alice.id}/${nodeId}/nodeinfo`, { ...creds, ca: creds.certificateChain });
    expect(viaMtls.status).toBe(403);

    // A test event the receiver refuses once (503: a retry), then takes.
    let refused = false;
    receiver.answer = (w) => {
      if (w.json.eventType !== 'TEST' || refused) return { status: 204 };
      refused = true;
      return { status: 503 };
    };
    const test = await t.call(`/api/nodes/${nodeId}/webhooks/test`, { method: 'POST', token: alice.token });
    expect(test.status, test.text).toBe(200);
    await receiver.waitFor((all) => all.some((w) => w.id === test.json.data.eventId && w.answeredOk));

    // A job nobody can read (given up at once), and one of a kind no worker here takes (stays queued).
    await insertJob(t.server.db, { kind: 'node.build', payload: { v: 99 }, maxAttempts: 1 });
    await insertJob(t.server.db, { kind: 'metrics.test', payload: {}, maxAttempts: 1 });

    // Two backups: one made, one refused by the node (a wrong password).
    await initWallet(t, alice, nodeId);
    expect((await backUp(t, alice, nodeId, PASSWORD)).status).toBe('SUCCEEDED');
    expect((await backUp(t, alice, nodeId, 'not-the-password')).status).toBe('FAILED');

    // Every event of the node delivered (the backups' too) before counting.
    await eventually(async () => {
      const r = await t.call(`/api/nodes/${nodeId}/webhooks/deliveries?limit=200`, { token: alice.token });
      expect(r.json.data.length).toBeGreaterThan(0);
      expect(r.json.data.filter((d: any) => d.state !== 'succeeded')).toEqual([]);
      expect(new Set(receiver.received.filter((w) => w.answeredOk).map((w) => w.id)).size).toBe(r.json.data.length);
    });
    const attempts = receiver.received.length;
    const delivered = receiver.received.filter((w) => w.answeredOk).length;
    expect(attempts - delivered).toBe(1);

    const expected = {
      [series('rlncloud_builds_total', { action: 'create', result: 'success' })]: 1,
      [series('rlncloud_build_duration_seconds_count', { action: 'create', result: 'success' })]: 1,
      [series('rlncloud_jobs_failed_total', { kind: 'node.build' })]: 1,
      [series('rlncloud_webhook_deliveries_total', { result: 'succeeded' })]: delivered,
      [series('rlncloud_webhook_deliveries_total', { result: 'retry' })]: 1,
      [series('rlncloud_webhook_delivery_duration_seconds_count', { result: 'succeeded' })]: delivered,
      [series('rlncloud_webhook_delivery_duration_seconds_count', { result: 'retry' })]: 1,
      [series('rlncloud_gateway_requests_total', { gateway: 'bearer', status_class: '2xx' })]: 1,
      [series('rlncloud_gateway_requests_total', { gateway: 'bearer', status_class: '4xx' })]: 2,
      [series('rlncloud_gateway_requests_total', { gateway: 'mtls', status_class: '4xx' })]: 1,
      [series('rlncloud_gateway_request_duration_seconds_count', { gateway: 'bearer', status_class: '2xx' })]: 1,
      [series('rlncloud_gateway_request_duration_seconds_count', { gateway: 'bearer', status_class: '4xx' })]: 2,
      [series('rlncloud_gateway_request_duration_seconds_count', { gateway: 'mtls', status_class: '4xx' })]: 1,
      [series('rlncloud_backups_total', { result: 'succeeded' })]: 1,
      [series('rlncloud_backups_total', { result: 'failed' })]: 1,
      [series('rlncloud_backup_duration_seconds_count', { result: 'succeeded' })]: 1,
      [series('rlncloud_backup_duration_seconds_count', { result: 'failed' })]: 1,
    };
    let after!: Scrape;
    // Counters move once their outcome is recorded, a moment after a client saw it.
    await eventually(async () => {
      after = await scrape();
      expect(movements(before, after, COUNTED)).toEqual(expected);
    });

    // The gauges read from the database: this server's database holds the one node and the jobs above.
    const gauge = (name: string, labels?: Record<string, string>) => after.samples.get(series(name, labels));
    expect(gauge('rlncloud_nodes', { status: 'RUNNING' })).toBe(1);
    for (const status of ['STARTING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'DESTROYING', 'DESTROYED']) expect(gauge('rlncloud_nodes', { status })).toBe(0);
    expect(gauge('rlncloud_jobs_queued', { kind: 'metrics.test' })).toBe(1);
    expect(gauge('rlncloud_jobs_running', { kind: 'metrics.test' })).toBe(0);
    expect(gauge('rlncloud_jobs_queued', { kind: 'node.build' }) ?? 0).toBe(0);
    expect(gauge('rlncloud_rollouts_in_progress')).toBe(0);
    // Every delivery done; the one node holds two ports of the server's range.
    expect(gauge('rlncloud_webhook_deliveries_unfinished', { state: 'pending' })).toBe(0);
    expect(gauge('rlncloud_node_ports', { state: 'used' })).toBe(2);
    // Durations are real times: a build takes a while, a gateway call less than its timeout.
    expect(gauge('rlncloud_build_duration_seconds_sum', { action: 'create', result: 'success' })! - (before.samples.get(series('rlncloud_build_duration_seconds_sum', { action: 'create', result: 'success' })) ?? 0)).toBeGreaterThan(0);
    expect(gauge('rlncloud_gateway_request_duration_seconds_sum', { gateway: 'bearer', status_class: '4xx' })).toBeLessThan(10);
    // Every statement is timed (the scrape's own reads are not, so this is the sequence's work).
    expect(gauge('rlncloud_db_query_duration_seconds_count')!).toBeGreaterThan(queryCountBefore);
    if (databaseLabel() === 'PostgreSQL') {
      expect(gauge('rlncloud_db_pool_connections')!).toBeGreaterThanOrEqual(1);
      expect(gauge('rlncloud_db_pool_idle_connections')!).toBeLessThanOrEqual(gauge('rlncloud_db_pool_connections')!);
      expect(gauge('rlncloud_db_pool_waiting_requests')).toBeGreaterThanOrEqual(0);
    }
  });

  it("counts and times every API answer by method, route pattern and status class, never by a client's path", async () => {
    const count = (s: Scrape, labels: Record<string, string>) => s.samples.get(series('rlncloud_api_request_duration_seconds_count', labels)) ?? 0;
    const before = await scrape();
    const hostile = 'nd_' + 'x'.repeat(40);
    expect((await t.call('/api/nodes', { token: alice.token })).status).toBe(200);
    expect((await t.call('/api/nodes', { token: alice.token })).status).toBe(200);
    expect((await t.call(`/api/nodes/${hostile}`, { token: alice.token })).status).toBe(400);
    expect((await t.call('/api/nodes')).status).toBe(401);
    expect((await t.call(`/api/no-such-route/${hostile}`, { token: alice.token })).status).toBe(404);
    const after = await eventuallyScrape((s) => count(s, { method: 'GET', route: 'unmatched', status_class: '4xx' }) > count(before, { method: 'GET', route: 'unmatched', status_class: '4xx' }));
    const moved = (labels: Record<string, string>) => count(after, labels) - count(before, labels);
    expect(moved({ method: 'GET', route: '/api/nodes', status_class: '2xx' })).toBe(2);
    expect(moved({ method: 'GET', route: '/api/nodes', status_class: '4xx' })).toBe(1);
    expect(moved({ method: 'GET', route: '/api/nodes/:id', status_class: '4xx' })).toBe(1);
    expect(moved({ method: 'GET', route: 'unmatched', status_class: '4xx' })).toBe(1);
    expect([...after.labelNames.get('rlncloud_api_request_duration_seconds')!].sort()).toEqual(['method', 'route', 'status_class']);
    expect([...after.samples.keys()].filter((k) => k.includes(hostile))).toEqual([]);
    // The alert's divisor exists before any answer: the 5xx rate is 0, not absent.
    expect(after.samples.has(series('rlncloud_api_request_duration_seconds_count', { method: 'GET', route: '/healthz', status_class: '5xx' }))).toBe(true);
    // The CA (ten years) and the gateway's own certificate (a year, issued from it) this server uses.
    const left = (certificate: string) => after.samples.get(series('rlncloud_certificate_expiry_seconds', { certificate }))! / 86_400;
    expect(left('ca')).toBeGreaterThan(3600);
    expect(left('mtls_server')).toBeGreaterThan(300);
    expect(left('mtls_server')).toBeLessThanOrEqual(366);
        // A pass has completed (the loop runs every few seconds): its time, not the start's.
    expect(Math.abs(after.samples.get('rlncloud_reconcile_last_pass_timestamp_seconds')! - Date.now() / 1000)).toBeLessThan(600);
  });

  const eventuallyScrape = async (done: (s: Scrape) => boolean): Promise<Scrape> => {
    for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const s = await scrape();
      if (done(s) || Date.now() > deadline) return s;
    }
  };

  it('serves nothing but GET /metrics on the metrics port', async () => {
    for (const path of ['/', '/healthz', '/readyz', '/api/nodes', '/metrics/', '/metricsx']) {
      const r = await fetch(`${metricsUrl()}${path}`);
      expect(r.status, path).toBe(404);
      await r.text();
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']) {
      const r = await fetch(`${metricsUrl()}/metrics`, { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.get('allow')).toBe('GET');
      await r.text();
    }
    // A query string (some scrape configs add parameters) is not a different path.
    expect((await fetch(`${metricsUrl()}/metrics?debug=1`)).status).toBe(200);
  });

  it('keeps the metrics off the API and the gateways', async () => {
    const api = await t.call('/metrics');
    expect(api.status).toBe(404);
    const bearer = await rawRequest(t.config.nodeApiUrl, '/metrics');
    expect(bearer.status).not.toBe(200);
    expect(bearer.text).not.toContain('rlncloud_');
  });

  it('refuses to start on a taken METRICS_PORT, naming the setting', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const listening = startMetricsListener({ registry: new Registry(), host: '127.0.0.1', port, log: createLogger('silent') });
      await expect(listening).rejects.toThrow(`127.0.0.1:${port} is already in use (another rln-cloud, or another program): stop what holds it, or set METRICS_PORT to another port`);
    } finally {
      holder.close();
    }
  });
});
