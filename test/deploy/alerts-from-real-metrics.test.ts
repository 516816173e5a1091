// The alert rules evaluated by promtool on what a real service exposed. The service (in process, on
// the test database, devnode daemons) is scraped healthy, then driven into trouble the way
// production gets there: a release whose image does not start fails its upgrades and pauses its
// rollout, a node's storage directory is deleted (STORAGE_LOST), a node created on it is FAILED, the node port range is used up, webhooks go to a
// receiver that refuses them, and an audit event cannot be recorded. Then its database is slow
// (statements that sleep; on PostgreSQL as many as its pool holds) while a user calls the API and a
// node writes to VSS, both held up by it; then it goes away (while users call the API and a node
// writes to VSS), then the service stops. Each scrape becomes one minute of promtool input
// (promtool.ts), and every alert must fire, or not, as the state says. A slow node, a stalled
// reconcile loop and a VSS store past its limit are alerts-from-a-stuck-service.test.ts'.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/service-process.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { randomNodePortRange } from '../helpers/ports.ts';
import { databaseLabel } from '../helpers/database.ts';
import { series } from '../helpers/metrics.ts';
import { createNodes } from '../helpers/tenants.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { hasPromtool, inputSeries, metricsRead, scrapeTarget, testRules, type TimedScrape } from './promtool.ts';
import { evalTime, expectAll, fires, MACHINE_DEPENDENT, until } from './alert-expectations.ts';
import { KUBERNETES_METRIC_NAMES } from '../../src/metrics/definitions.ts';

describe.skipIf(!hasPromtool)('alerts fired from the metrics of a real service', () => {
  let t: TestServer;
  let receiver: Receiver;
  let owner: TestUser;
  let instance: string;
  let stopped = false;
  let running: string;
  // healthy, in trouble, without its database, stopped (undefined: the scrape failed)
  const scrapes: { healthy?: TimedScrape; trouble?: TimedScrape; slow?: TimedScrape[]; noDatabase?: TimedScrape; failingCalls?: TimedScrape[] } = {};
  /** How long (ms) and with what status the API and VSS answered while the database was slow. */
  const heldUp: { api: Array<{ status: number; ms: number }>; vss: Array<{ status: number; ms: number }> } = { api: [], vss: [] };
  /** What the API and the bearer gateway answered while the database was gone. */
  const failedAnswers: number[] = [];
  /** What VSS answered a node's writes while the database was gone. */
  const failedVssWrites: number[] = [];

  const scrape = () => scrapeTarget(instance);
  const sample = (s: TimedScrape, name: string, labels?: Record<string, string>) => s.samples.get(series(name, labels));

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
    const [a, b] = await createNodes(t, owner, [{ name: 'a', settings }, { name: 'b', settings }]);
    running = a;
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
    // b's volume goes (its storage directory deleted): STORAGE_LOST, its daemon stopped.
    rmSync(join(t.config.dataDir, 'nodes', b!, 'storage'), { recursive: true, force: true });
    await t.waitForStatus(owner, b!, 'STORAGE_LOST', 60_000);
    // New nodes get the latest release, which does not start: FAILED, holding the last two ports.
    const [failed] = await createNodes(t, owner, [{ name: 'c', settings }], { untilRunning: false });
    await t.waitForStatus(owner, failed, 'FAILED', 60_000);
    scrapes.trouble = await until('a refused delivery counted', async () => {
      const s = await scrape();
      return (sample(s, 'rlncloud_webhook_deliveries_total', { result: 'retry' }) ?? 0) > 0 && s;
    });

    // Then a slow database, a scrape a minute for twelve minutes: transactions that take 3 s (a long
    // report's, a migration's) on the service's own database handle, as many as it has sessions: the
    // pool's 10 connections on PostgreSQL, PGlite's one (a slow statement there would stop the whole
    // process, not keep it waiting). The service's statements wait for a session; a user listing
    // their nodes and the node writing to VSS meanwhile wait with them, seconds.
    const slow = { transactions: databaseLabel() === 'PostgreSQL' ? 10 : 1, seconds: 3 };
    /** A transaction that holds its session `slow.seconds`; `inside` is called once it holds one. */
    const longTransaction = (inside: () => void) =>
      t.server.db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        inside();
        await new Promise((r) => setTimeout(r, slow.seconds * 1000));
      });
    const timed = async (call: () => Promise<number>) => {
      const started = Date.now();
      return { status: await call(), ms: Date.now() - started };
    };
    scrapes.slow = [await scrape()];
    for (let minute = 1; minute <= 12; minute++) {
      let inside!: () => void;
      const allInside = new Promise<void>((resolve) => (inside = resolve));
      let held = 0;
      const sleeping = Promise.all(
        Array.from({ length: slow.transactions }, () =>
          longTransaction(() => {
            if (++held === slow.transactions) inside();
          }),
        ),
      );
      // Every session taken: what comes now waits for one.
      await allInside;
      const api = timed(async () => (await t.call('/api/nodes', { token: owner.token })).status);
      const vss = timed(vssWrite);
      await new Promise((r) => setTimeout(r, 100));
      scrapes.slow.push(await scrape());
      await sleeping;
      heldUp.api.push(await api);
      heldUp.vss.push(await vss);
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
  }, 240_000);
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
    expect(sample(s, 'rlncloud_nodes', { status: 'STORAGE_LOST' })).toBe(1);
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
      RlnCloudNodeStorageLost: {},
      RlnCloudAuditRecordFailing: {},
      RlnCloudNodePortsNearlyExhausted: { job: 'rln-cloud', instance },
    };
    // Statement times on a machine shared with other tests are not the service's to promise.
    const expectations = expectAll(
      Object.fromEntries(Object.entries(firing).map(([alert, labels]) => [alert, [labels]])),
      ['RlnCloudDatabaseSlow', ...MACHINE_DEPENDENT],
    );
    const result = testRules([{ inputSeries: inputSeries([scrapes.healthy!, scrapes.trouble!], instance, 40), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudDatabaseSlow while statements take long', () => {
    const expectations = [{ alert: 'RlnCloudDatabaseSlow', evalTime: evalTime('RlnCloudDatabaseSlow'), firing: [{}] }];
    const result = testRules([{ inputSeries: inputSeries(scrapes.slow!, instance, 10), expectations }]);
    expect(result.ok, result.output).toBe(true);
  });

  it('fires RlnCloudApiSlow and RlnCloudVssSlow while the slow database holds up API answers and VSS writes', () => {
    // What the user and the node saw: answers, late.
    expect(heldUp.api.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(heldUp.vss.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(Math.min(...heldUp.api.map((a) => a.ms))).toBeGreaterThan(2500);
    expect(Math.min(...heldUp.vss.map((a) => a.ms))).toBeGreaterThan(250);
    const result = testRules([{ inputSeries: inputSeries(scrapes.slow!, instance, 10), expectations: [fires('RlnCloudApiSlow', {}), fires('RlnCloudVssSlow', {})] }]);
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
    // The operator's CA, ten days from expiry, and their gateway certificate from it, two days.
    dir = mkdtempSync(join(tmpdir(), 'rln-cert-alerts-'));
    const created = await CertificateAuthority.create('alerts test CA', 10 / 365);
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

  it('fires RlnCloudCertificateExpiringSoon for both certificates, RlnCloudCertificateExpiring for the gateway one, and nothing else', async () => {
    const instance = `127.0.0.1:${t.config.metricsPort}`;
    const s = await scrapeTarget(instance);
    const daysLeft = (certificate: string) => s.samples.get(series('rlncloud_certificate_expiry_seconds', { certificate }))! / 86_400;
    expect(daysLeft('mtls_server')).toBeGreaterThan(1.9);
    expect(daysLeft('mtls_server')).toBeLessThanOrEqual(2);
    expect(daysLeft('ca')).toBeGreaterThan(9.9);
    expect(daysLeft('ca')).toBeLessThanOrEqual(10);
    const firing = {
      RlnCloudCertificateExpiringSoon: [{ certificate: 'ca' }, { certificate: 'mtls_server' }],
      RlnCloudCertificateExpiring: [{ certificate: 'mtls_server' }],
    };
    const result = testRules([{ inputSeries: inputSeries([s], instance, 80), expectations: expectAll(firing, MACHINE_DEPENDENT) }]);
    expect(result.ok, result.output).toBe(true);
  });
});
