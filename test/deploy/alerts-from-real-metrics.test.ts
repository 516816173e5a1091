// The alert rules evaluated by promtool on what a real service exposed. The service (in process, on
// the test database, devnode daemons) is scraped healthy, then driven into trouble the way
// production gets there: a release whose image does not start fails its upgrades and pauses its
// rollout, a node created on it is FAILED, the node port range is used up, webhooks go to a
// receiver that refuses them, and an audit event cannot be recorded. Then its database is slow
// (statements that sleep; on PostgreSQL more than its pool holds), then goes away (while users call
// the API and a node writes to VSS), then the service stops. Each scrape becomes one minute of promtool input (promtool.ts), and every alert must fire,
// or not, as the state says.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/service-process.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { randomNodePortRange } from '../helpers/ports.ts';
import { databaseLabel } from '../helpers/database.ts';
import { parseExposition, series, type Scrape } from '../helpers/metrics.ts';
import { createNodes } from '../helpers/tenants.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { ALERT_CASES } from './alert-cases.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { alertRules, hasPromtool, inputSeries, metricsRead, testRules, type Expectation } from './promtool.ts';
import { KUBERNETES_METRIC_NAMES } from '../../src/metrics/definitions.ts';

const evalTime = (alert: string) => ALERT_CASES[alert]!.evalTime;
/**
 * The nodes' volume here is the test machine's disk, whose fullness is not the service's to promise
 * (RlnCloudNodeStorageNearlyFull's cases are alert-cases.ts'; its metric, test/api/node-storage.test.ts).
 */
const MACHINE_DEPENDENT = ['RlnCloudNodeStorageNearlyFull'];

/** Every alert of the rules at its case's time: firing with `firing[alert]`'s labels, or not at all. */
const expectAll = (firing: Record<string, Record<string, string>>, except: string[] = []): Expectation[] =>
  alertRules()
    .map((r) => r.alert)
    .filter((alert) => !except.includes(alert))
    .map((alert) => ({ alert, evalTime: evalTime(alert), firing: firing[alert] ? [firing[alert]!] : [] }));

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!hasPromtool)('alerts fired from the metrics of a real service', () => {
  let t: TestServer;
  let receiver: Receiver;
  let owner: TestUser;
  let instance: string;
  let stopped = false;
  let running: string;
  // healthy, in trouble, without its database, stopped (undefined: the scrape failed)
  const scrapes: { healthy?: Scrape; trouble?: Scrape; slow?: Scrape[]; noDatabase?: Scrape; failingCalls?: Scrape[] } = {};
  /** What the API and the bearer gateway answered while the database was gone. */
  const failedAnswers: number[] = [];
  /** What VSS answered a node's writes while the database was gone. */
  const failedVssWrites: number[] = [];

  const scrape = async (): Promise<Scrape> => {
    const res = await fetch(`http://${instance}/metrics`);
    expect(res.status).toBe(200);
    return parseExposition(await res.text());
  };
  const sample = (s: Scrape, name: string, labels?: Record<string, string>) => s.samples.get(series(name, labels));

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.answer = () => ({ status: 503 });
    t = await startTestServer({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // a refused delivery waits an hour for its retry: a backlog that stays
      WEBHOOK_RETRY_SCHEDULE: '0,1h',
      // three nodes' worth of ports
      NODE_PORT_RANGE: randomNodePortRange(6),
    });
    instance = `127.0.0.1:${t.config.metricsPort}`;
    owner = await t.createUser('scale');
    scrapes.healthy = await scrape();

    const settings = { webhookUrl: receiver.url };
    [running] = await createNodes(t, owner, [{ name: 'a', settings }, { name: 'b', settings }]);
    // The running node keeps its channel state in VSS: its writes succeed while the database is there.
    const vss = vssClient(await t.server.services.vss.issueUrl(owner.id, running!), newVssKey());
    const vssWrite = async () => (await vss.put('s', [{ key: 'monitor', version: -1, value: Buffer.alloc(100) }])).status;
    expect(await vssWrite()).toBe(200);
    // The audit table out of reach for one audited action (a certificate issued): it goes ahead, unrecorded.
    await t.server.db.exec('ALTER TABLE audit_events RENAME TO audit_events_away');
    expect((await t.call(`/api/nodes/${running}/generate-cert`, { method: 'POST', token: owner.token })).status).toBe(200);
    await t.server.db.exec('ALTER TABLE audit_events_away RENAME TO audit_events');
    // devnode exits at once on versions named fail-*: both upgrades fail, the budget of 1 is spent.
    const version = `fail-${Date.now()}`;
    await t.server.services.releases.publish(version, { concurrency: 1, failureBudget: 1 });
    await until('the rollout to pause', async () => (await t.server.services.releases.status(version)).state === 'paused');
    // New nodes get the latest release, which does not start: FAILED, holding the last two ports.
    const [failed] = await createNodes(t, owner, [{ name: 'c', settings }], { untilRunning: false });
    await t.waitForStatus(owner, failed, 'FAILED', 60_000);
    scrapes.trouble = await until('a refused delivery counted', async () => {
      const s = await scrape();
      return (sample(s, 'rlncloud_webhook_deliveries_total', { result: 'retry' }) ?? 0) > 0 && s;
    });

    // Then a slow database, a scrape a minute for twelve minutes: slow statements on the service's
    // own (timed) database handle. On PostgreSQL one more than the pool's 10 connections, so one
    // waits and so do the service's own statements; PGlite runs one statement at a time anyway.
    const slow = databaseLabel() === 'PostgreSQL' ? { statements: 11, seconds: 0.8 } : { statements: 2, seconds: 0.6 };
    scrapes.slow = [await scrape()];
    for (let minute = 1; minute <= 12; minute++) {
      const sleeping = Promise.all(Array.from({ length: slow.statements }, () => t.server.db.query(`SELECT pg_sleep(${slow.seconds})`)));
      await new Promise((r) => setTimeout(r, 100));
      scrapes.slow.push(await scrape());
      await sleeping;
    }

    // The database goes away under the running service; its scrape still answers.
    await t.server.db.close();
    scrapes.noDatabase = await scrape();
    // Users keep calling meanwhile: a scrape a minute for eight minutes, each after a few calls to
    // the API and to a node through the bearer gateway, every one needing the database.
    scrapes.failingCalls = [scrapes.slow.at(-1)!];
    for (let minute = 1; minute <= 8; minute++) {
      for (let call = 0; call < 6; call++) {
        failedAnswers.push((await t.call('/api/nodes', { token: owner.token })).status);
        failedAnswers.push((await rawRequest(t.config.nodeApiUrl, `/${owner.id}/${running}/nodeinfo`, { headers: { authorization: `Bearer ${owner.token}` } })).status);
        failedVssWrites.push(await vssWrite());
      }
      scrapes.failingCalls.push(await scrape());
    }
  }, 180_000);
  afterAll(async () => {
    if (!stopped) await t?.stop();
    await receiver?.close();
  });

  it('scraped the trouble it was driven into', () => {
    const s = scrapes.trouble!;
    expect(sample(s, 'rlncloud_builds_total', { action: 'upgrade', result: 'failure' })).toBe(2);
    expect(sample(s, 'rlncloud_builds_total', { action: 'create', result: 'failure' })).toBe(1);
    expect(sample(s, 'rlncloud_builds_total', { action: 'create', result: 'success' })).toBe(2);
    expect(sample(s, 'rlncloud_rollouts', { state: 'paused' })).toBe(1);
    expect(sample(s, 'rlncloud_nodes', { status: 'FAILED' })).toBe(1);
    expect(sample(s, 'rlncloud_node_ports', { state: 'free' })).toBe(0);
    expect(sample(s, 'rlncloud_node_ports', { state: 'used' })).toBe(6);
    expect(sample(s, 'rlncloud_webhook_deliveries_total', { result: 'succeeded' })).toBe(0);
    expect(sample(s, 'rlncloud_audit_record_failures_total')).toBe(1);
    expect(sample(s, 'rlncloud_webhook_deliveries_unfinished', { state: 'pending' })).toBeGreaterThan(0);
    expect(sample(scrapes.noDatabase!, 'rlncloud_rollouts_in_progress')).toBeNaN();
  });

  it("reads in the rules and the dashboard only metrics the service exposed (the pool's: PostgreSQL only; the kubernetes runtime's: with it only)", () => {
    const dashboard = readFileSync(join(repoRoot, 'deploy/monitoring/grafana-dashboard.json'), 'utf8');
    const names = new Set([...metricsRead(), ...(dashboard.match(/\brlncloud_[a-z0-9_]+/g) ?? [])].map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    // declared families: a labelled gauge with no series yet (no job of any kind) is declared all the same
    const exposed = new Set(scrapes.trouble!.types.keys());
    const elsewhere = (n: string) => n.startsWith('rlncloud_db_pool_') || (KUBERNETES_METRIC_NAMES as readonly string[]).includes(n);
    const missing = [...names].filter((n) => n !== 'up' && !exposed.has(n) && !elsewhere(n));
    expect(missing).toEqual([]);
  });

  it('fires nothing while the service is healthy', () => {
    const result = testRules([{ inputSeries: inputSeries([scrapes.healthy!], instance, 40), expectations: expectAll({}, MACHINE_DEPENDENT) }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires what the trouble calls for, and nothing else', () => {
    const firing = {
      RlnCloudBuildsFailing: {},
      RlnCloudWebhookDeliveriesFailing: {},
      RlnCloudWebhookBacklog: {},
      RlnCloudRolloutPaused: {},
      RlnCloudNodesFailed: {},
      RlnCloudAuditRecordFailing: {},
      RlnCloudNodePortsNearlyExhausted: { job: 'rln-cloud', instance },
    };
    // Statement times on a machine shared with other tests are not the service's to promise.
    const expectations = expectAll(firing, ['RlnCloudDatabaseSlow', ...MACHINE_DEPENDENT]);
    const result = testRules([{ inputSeries: inputSeries([scrapes.healthy!, scrapes.trouble!], instance, 40), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudDatabaseSlow while statements take long', () => {
    const expectations = [{ alert: 'RlnCloudDatabaseSlow', evalTime: evalTime('RlnCloudDatabaseSlow'), firing: [{}] }];
    const result = testRules([{ inputSeries: inputSeries(scrapes.slow!, instance, 10), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it.runIf(databaseLabel() === 'PostgreSQL')('fires RlnCloudDatabasePoolExhausted while statements wait for a connection', () => {
    for (const s of scrapes.slow!.slice(1)) expect(sample(s, 'rlncloud_db_pool_waiting_requests')).toBeGreaterThan(0);
    const expectations = [{ alert: 'RlnCloudDatabasePoolExhausted', evalTime: evalTime('RlnCloudDatabasePoolExhausted'), firing: [{ job: 'rln-cloud', instance }] }];
    const result = testRules([{ inputSeries: inputSeries(scrapes.slow!, instance, 10), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudDatabaseUnreachable once the database is gone', () => {
    const expectations = [{ alert: 'RlnCloudDatabaseUnreachable', evalTime: evalTime('RlnCloudDatabaseUnreachable'), firing: [{ job: 'rln-cloud', instance }] }];
    const result = testRules([{ inputSeries: inputSeries([scrapes.slow!.at(-1)!, scrapes.noDatabase!], instance, 10), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudApiErrors and RlnCloudGatewayErrors while calls fail for want of the database', () => {
    expect(failedAnswers.filter((status) => status < 500)).toEqual([]);
    const expectations = [
      { alert: 'RlnCloudApiErrors', evalTime: '7m', firing: [{}] },
      { alert: 'RlnCloudGatewayErrors', evalTime: '7m', firing: [{ gateway: 'bearer' }] },
    ];
    const result = testRules([{ inputSeries: inputSeries(scrapes.failingCalls!, instance, 2), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudVssWritesFailing (for the replica) and RlnCloudVssErrors while VSS writes fail for want of the database', () => {
    expect(failedVssWrites.filter((status) => status !== 500)).toEqual([]);
    const expectations = [
      { alert: 'RlnCloudVssWritesFailing', evalTime: '7m', firing: [{ instance }] },
      { alert: 'RlnCloudVssErrors', evalTime: '7m', firing: [{}] },
    ];
    const result = testRules([{ inputSeries: inputSeries(scrapes.failingCalls!, instance, 2), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudReplicaDown and RlnCloudNoReplicaUp once the service has stopped', async () => {
    await t.stop();
    stopped = true;
    const failed = await fetch(`http://${instance}/metrics`).then(() => false, () => true);
    expect(failed, 'the metrics port still answers').toBe(true);
    const expectations = [
      { alert: 'RlnCloudReplicaDown', evalTime: evalTime('RlnCloudReplicaDown'), firing: [{ job: 'rln-cloud', instance }] },
      { alert: 'RlnCloudNoReplicaUp', evalTime: evalTime('RlnCloudNoReplicaUp'), firing: [{}] },
    ];
    const result = testRules([{ inputSeries: inputSeries([scrapes.noDatabase!, undefined], instance, 10), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });
});

describe.skipIf(!hasPromtool)('certificate alerts fired from the metrics of a real service', () => {
  let t: TestServer;
  let dir: string;

  beforeAll(async () => {
    // The operator's own gateway certificate, two days from expiry, from a CA of ten years.
    dir = mkdtempSync(join(tmpdir(), 'rln-cert-alerts-'));
    const created = await CertificateAuthority.create('alerts test CA');
    const server = await created.ca.issueServerCertificate(['localhost', '127.0.0.1'], 2);
    const files = { ca: join(dir, 'ca.pem'), caKey: join(dir, 'ca.key'), cert: join(dir, 'gateway.pem'), key: join(dir, 'gateway.key') };
    writeFileSync(files.ca, created.certificatePem);
    writeFileSync(files.caKey, created.privateKeyPem);
    writeFileSync(files.cert, server.certificatePem);
    writeFileSync(files.key, server.privateKeyPem);
    t = await startTestServer({ CA_CERT_FILE: files.ca, CA_KEY_FILE: files.caKey, MTLS_CERT_FILE: files.cert, MTLS_KEY_FILE: files.key });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fires RlnCloudCertificateExpiringSoon and RlnCloudCertificateExpiring for the gateway certificate only', async () => {
    const instance = `127.0.0.1:${t.config.metricsPort}`;
    const s = parseExposition(await (await fetch(`http://${instance}/metrics`)).text());
    const left = (certificate: string) => s.samples.get(series('rlncloud_certificate_expiry_seconds', { certificate }))!;
    expect(left('mtls_server') / 86_400).toBeGreaterThan(1.9);
    expect(left('mtls_server') / 86_400).toBeLessThanOrEqual(2);
    expect(left('ca') / 86_400 / 365).toBeGreaterThan(9.9);
    const expectations = ['RlnCloudCertificateExpiringSoon', 'RlnCloudCertificateExpiring'].map((alert) => ({ alert, evalTime: evalTime(alert), firing: [{ certificate: 'mtls_server' }] }));
    const result = testRules([{ inputSeries: inputSeries([s], instance, 80), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });
});
