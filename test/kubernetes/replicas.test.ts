// Several replicas, one service: two (then three) `npm start` processes on one PostgreSQL with the
// kubernetes runtime on the test cluster, sharing the CA, the webhook keyring and an S3 store
// (s3rver), as the Kubernetes manifests deploy them. Each replica's gateways reach every node; a
// token revoked through one is refused by the other within a second; a web session and an export
// work across them; one replica holds the reconcile lease; killing the replica that holds it in
// the middle of builds and of a rollout loses no work and doubles none (builds contiguous, one
// upgrade per node, every webhook event delivered under one webhook-id).
//
// Needs PostgreSQL (several replicas cannot share embedded PGlite): runs in CI's PostgreSQL pass.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { deleteNamespace, describeOnCluster, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';
import { callService, runCli, serviceEnv, sharedSealKeyFile, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { rawRequest, tlsRequest } from '../gateway/gateway-client.ts';
import { startS3Server } from '../logs/s3-server.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const PASSWORD = 'node-password-123';
const WEB_PASSWORD = 'web-password-123';
const NODES = 3;
const QUOTA_LIMIT = 60;
const QUOTA_BATCH = 10;
const describeReplicas = process.env.TEST_DATABASE_URL ? describeOnCluster : describe.skip;

describeReplicas('several replicas on one PostgreSQL (kubernetes runtime, test cluster)', () => {
  const namespace = testNamespace('replicas');
  const shared = mkdtempSync(join(tmpdir(), 'rln-replicas-'));
  let database: TestDatabase;
  let sql: pg.Client;
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let receiver: Receiver;
  let sharedEnv: Record<string, string>;
  const replicas: ServiceProcess[] = [];
  let token: string;
  let userId: string;
  const nodeIds: string[] = [];

  const startReplica = async (name: string) => {
    const dataDir = join(shared, name);
    const replica = await startServiceProcess(await serviceEnv(dataDir, sharedEnv), 120_000);
    replicas.push(replica);
    return replica;
  };
  const alive = () => replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  const api = (replica: ServiceProcess, path: string, init: { method?: string; body?: unknown } = {}, as = token) => callService(replica, as, path, init);
  const bearer = (replica: ServiceProcess, nodeId: string, path: string, opts: { method?: string; body?: object; token?: string } = {}) =>
    rawRequest(replica.env.NODE_API_URL ?? `http://127.0.0.1:${replica.env.NODE_API_PORT}`, `/${userId}/${nodeId}${path}`, {
      method: opts.method,
      body: opts.body && JSON.stringify(opts.body),
      headers: { authorization: `Bearer ${opts.token ?? token}`, ...(opts.body ? { 'content-type': 'application/json' } : {}) },
    });
  const node = async (replica: ServiceProcess, nodeId: string) => (await api(replica, `/api/nodes/${nodeId}`)).json.data;
  const leaseHolder = async () => (await sql.query<{ holder: string }>(`SELECT holder FROM leases WHERE name = 'reconciler' AND expires_at > now()`)).rows[0]?.holder;
  // Each replica logs its name among the replicas when it starts serving (the lease holder's name).
  const replicaId = (r: ServiceProcess) => /"replica":"([^"]+)"/.exec(r.output())?.[1];
  const replicaHolding = (holder: string | undefined) => alive().find((r) => holder !== undefined && replicaId(r) === holder);

  beforeAll(async () => {
    database = await createTestDatabase();
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    s3 = await startS3Server();
    receiver = await startReceiver();
    // What the Kubernetes Secrets hold: one CA and one webhook keyring for every replica.
    const ca = await CertificateAuthority.create('replicas test CA');
    writeFileSync(join(shared, 'ca.pem'), ca.certificatePem);
    writeFileSync(join(shared, 'ca.key'), ca.privateKeyPem, { mode: 0o600 });
    writeFileSync(join(shared, 'database-url'), database.url!);
    sharedEnv = {
      DATABASE_URL_FILE: join(shared, 'database-url'),
      RUNTIME: 'kubernetes',
      KUBECONFIG: testKubeconfig!,
      K8S_NAMESPACE: namespace,
      K8S_STORAGE_SIZE: '64Mi',
      ...SMALL_NODE_PODS,
      NODE_START_TIMEOUT_MS: '120000',
      CA_CERT_FILE: join(shared, 'ca.pem'),
      // One unlock seal for every replica (UNLOCK_SEAL_KEY_FILE: shared): each opens the nodes' root keys.
      UNLOCK_SEAL_KEY_FILE: sharedSealKeyFile(shared),
      CA_KEY_FILE: join(shared, 'ca.key'),
      WEBHOOK_SIGNING_KEY_FILE: join(shared, 'webhook-keys.json'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0,1s,2s,4s,8s,15s,30s',
      BOOTSTRAP_DEV_USER: 'false',
      JOB_POLL_INTERVAL_MS: '300',
      RECONCILE_INTERVAL_MS: '2000',
      SHUTDOWN_TIMEOUT: '5s',
      LOG_LEVEL: 'info',
      // Small batches, so the quota case below is decided across the replicas within a few calls.
      USAGE_FLUSH_BATCH: String(QUOTA_BATCH),
      ...s3.env,
    };
    await startReplica('a');
    await startReplica('b');
    const cli = (args: string[]) => runCli(replicas[0]!.env, args);
    const user = cli(['user', 'create', `replicas-${Date.now()}@example.com`, '--plan', 'scale', '--password', WEB_PASSWORD]);
    userId = user.id;
    token = cli(['token', 'create', user.email, '--name', 'replicas']).token;
  }, 300_000);

  afterAll(async () => {
    for (const r of replicas) await r.stop('SIGKILL').catch(() => {});
    await deleteNamespace(namespace);
    await sql?.end();
    await database?.drop().catch(() => {});
    await s3?.stop();
    await receiver?.close();
    rmSync(shared, { recursive: true, force: true });
  });

  it('creates nodes through one replica and reaches each through both replicas\' gateways, with a token and a certificate', async () => {
    const [a, b] = replicas as [ServiceProcess, ServiceProcess];
    for (let i = 0; i < NODES; i++) {
      const created = await api(i % 2 ? b : a, '/api/nodes', { method: 'POST', body: { name: `r${i}`, network: 'regtest', settings: { webhookUrl: receiver.url } } });
      expect(created.status, JSON.stringify(created.json)).toBe(200);
      nodeIds.push(created.json.data.nodeId);
    }
    for (const id of nodeIds) await until(`node ${id} RUNNING`, async () => (await node(b, id))?.status === 'RUNNING', 180_000, () => node(a, id));

    const [first] = nodeIds as [string];
    expect((await bearer(a, first, '/init', { method: 'POST', body: { password: PASSWORD } })).status).toBe(200);
    expect((await bearer(b, first, '/unlock', { method: 'POST', body: { password: PASSWORD } })).status).toBe(200);
    const viaA = await bearer(a, first, '/nodeinfo');
    const viaB = await bearer(b, first, '/nodeinfo');
    expect([viaA.status, viaB.status]).toEqual([200, 200]);
    expect(viaB.json.pubkey).toBe(viaA.json.pubkey);
    // A certificate issued through one replica opens the node through the other's mTLS gateway.
    const issued = await api(a, `/api/nodes/${first}/generate-cert`, { method: 'POST' });
    expect(issued.status).toBe(200);
    const creds = { ...issued.json, ca: issued.json.certificateChain };
    const mtls = await tlsRequest(`https://127.0.0.1:${b.env.MTLS_PORT}`, `/nodes/${userId}/${first}/nodeinfo`, creds);
    expect(mtls.status, mtls.text).toBe(200);
    expect(mtls.json.pubkey).toBe(viaA.json.pubkey);
    // ... and once revoked through that other replica, the first one refuses it within a second.
    const serial = (await api(a, `/api/nodes/${first}/certs`)).json.certificates[0].serial;
    expect((await api(b, `/api/nodes/${first}/certs/${serial}`, { method: 'DELETE' })).status).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, 1_100));
    const refused = await tlsRequest(`https://127.0.0.1:${a.env.MTLS_PORT}`, `/nodes/${userId}/${first}/nodeinfo`, creds).catch((err) => ({ status: 0, text: String(err) }));
    expect(refused.status).not.toBe(200);
  }, 400_000);

  it('refuses a token revoked through one replica on every other within a second', async () => {
    const [a, b] = replicas as [ServiceProcess, ServiceProcess];
    const made = await api(a, '/api/tokens', { method: 'POST', body: { name: 'short-lived' } });
    const second = made.json.data;
    const [first] = nodeIds as [string];
    expect((await bearer(b, first, '/nodeinfo', { token: second.token })).status).toBe(200);
    expect((await api(b, '/api/nodes', {}, second.token)).status).toBe(200);
    expect((await api(a, `/api/tokens/${second.id}`, { method: 'DELETE' })).status).toBeLessThan(300);
    // The management API reads the token afresh on every request; the gateways remember a lookup for at most a second.
    expect((await api(b, '/api/nodes', {}, second.token)).status).toBe(401);
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await bearer(b, first, '/nodeinfo', { token: second.token })).status).toBe(401);
  }, 60_000);

  it("counts one account's API calls on both replicas against one monthly limit, passing it by less than the documented bound", async () => {
    const [a, b] = replicas as [ServiceProcess, ServiceProcess];
    const cli = (args: string[]) => runCli(a.env, args);
    cli(['plan', 'set', 'quota-test', '--api-calls-per-month', String(QUOTA_LIMIT), '--nodes', '1']);
    const email = `quota-${Date.now()}@example.com`;
    cli(['user', 'create', email, '--plan', 'quota-test']);
    const limited = cli(['token', 'create', email, '--name', 'quota']).token;
    // Both replicas at once, four callers each, until each has refused.
    let admitted = 0;
    const refusals: Array<{ status: number; json: any }> = [];
    await Promise.all(
      [a, b].flatMap((replica) =>
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < 60; i++) {
            const r = await api(replica, '/api/nodes', {}, limited);
            if (r.status === 200) admitted++;
            else {
              refusals.push(r);
              return;
            }
          }
        }),
      ),
    );
    expect(refusals).toHaveLength(8);
    for (const r of refusals) expect([r.status, r.json.error.code]).toEqual([429, 'quota_exceeded']);
    // docs/USAGE.md: at least the limit (no replica refuses below it), fewer than N x USAGE_FLUSH_BATCH past it.
    expect(admitted).toBeGreaterThanOrEqual(QUOTA_LIMIT);
    expect(admitted).toBeLessThanOrEqual(QUOTA_LIMIT + 2 * QUOTA_BATCH - 1);
    // Every replica goes on refusing, with the month's end as Retry-After.
    for (const replica of [a, b]) {
      const res = await fetch(`${replica.base}/api/nodes`, { headers: { authorization: `Bearer ${limited}` } });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }, 120_000);

  it('keeps a web session on any replica, and serves an export made by one from the other', async () => {
    const [a, b] = replicas as [ServiceProcess, ServiceProcess];
    const signIn = await fetch(`${a.base}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: await userEmail(), password: WEB_PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const onB = await fetch(`${b.base}/api/nodes`, { headers: { cookie } });
    expect(onB.status).toBe(200);
    expect(((await onB.json()) as any).nodes).toHaveLength(NODES);

    const [first] = nodeIds as [string];
    const started = await api(a, `/api/nodes/${first}/logs`, { method: 'POST' });
    expect(started.status).toBe(200);
    const urls = await until('the export to finish (asked of the other replica)', async () => {
      const r = await api(b, `/api/nodes/${first}/logs?taskId=${started.json.taskId}`);
      return r.status === 200 && Array.isArray(r.json.data) && r.json.data.length > 0 && (r.json.data as string[]);
    }, 120_000);
    const part = await fetch(urls[0]!);
    expect(part.status).toBe(200);
    expect((await part.arrayBuffer()).byteLength).toBeGreaterThan(0);
  }, 200_000);

  async function userEmail() {
    return (await sql.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [userId])).rows[0]!.email;
  }

  it('has one replica holding the reconcile lease; killing it mid-builds loses nothing and the other takes over', async () => {
    const holder = await until('a reconcile lease holder', leaseHolder, 30_000);
    const victim = replicaHolding(holder);
    expect(victim, `lease held by ${holder}, not one of ours`).toBeDefined();
    const survivor = alive().find((r) => r !== victim)!;
    // Builds queued through the replica about to die: it may be carrying any of them out.
    const [, second, third] = nodeIds as [string, string, string];
    for (const id of [second, third]) expect((await api(victim!, `/api/nodes/${id}/stop`, { method: 'POST' })).status).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, 500));
    // Mid-build for real: a pod takes seconds to stop, so the builds are still under way here.
    const underWay = await sql.query(`SELECT 1 FROM builds WHERE node_id = ANY($1) AND status = 'IN_PROGRESS'`, [[second, third]]);
    expect(underWay.rowCount, 'the builds finished before the kill: nothing was interrupted').toBeGreaterThan(0);
    await victim!.stop('SIGKILL');
    for (const id of [second, third]) await until(`node ${id} PAUSED after the kill`, async () => (await node(survivor, id))?.status === 'PAUSED', 120_000, () => node(survivor, id));
    // The survivor took the lease over (within its TTL) without anyone handing it back.
    await until('the survivor to hold the lease', async () => replicaHolding(await leaseHolder()) === survivor, 40_000, leaseHolder);
    for (const id of [second, third]) expect((await api(survivor, `/api/nodes/${id}/start`, { method: 'POST' })).status).toBeLessThan(300);
    for (const id of [second, third]) await until(`node ${id} RUNNING again`, async () => (await node(survivor, id))?.status === 'RUNNING', 180_000, () => node(survivor, id));
    await startReplica('c');
  }, 400_000);

  it('finishes a rollout whose leading replica is killed in the middle: one upgrade per node', async () => {
    const publisher = alive()[0]!;
    const published = runCli(publisher.env, ['release', 'publish', 'devnode-0.2.0', '--concurrency', '1']);
    expect(published.error, JSON.stringify(published)).toBeUndefined();
    await until('the first upgrade to start', async () => {
      for (const id of nodeIds) if ((await node(publisher, id))?.status === 'IN_PROGRESS') return true;
      return false;
    }, 60_000);
    const victim = replicaHolding(await leaseHolder()) ?? alive()[0]!;
    await victim.stop('SIGKILL');
    const survivor = alive()[0]!;
    for (const id of nodeIds) {
      await until(`node ${id} upgraded`, async () => {
        const n = await node(survivor, id);
        return n?.status === 'RUNNING' && n.rln_commit_id === 'devnode-0.2.0';
      }, 300_000, () => node(survivor, id));
    }
    for (const id of nodeIds) {
      const builds = (await node(survivor, id)).builds as Array<{ buildNumber: number; action?: string }>;
      expect(builds.map((b) => b.buildNumber), `node ${id}`).toEqual(builds.map((_, i) => i + 1));
    }
    const upgrades = await sql.query<{ node_id: string; n: string }>(
      `SELECT node_id, count(*) AS n FROM builds WHERE action = 'upgrade' GROUP BY node_id`,
    );
    expect(upgrades.rows.map((r) => [r.node_id, Number(r.n)]).sort()).toEqual([...nodeIds].sort().map((id) => [id, 1]));
  }, 600_000);

  it('delivers every webhook event, each under one webhook-id, across the kills', async () => {
    const survivor = alive()[0]!;
    const expected = new Map<string, unknown>();
    await until('every delivery to settle', async () => {
      expected.clear();
      for (const id of nodeIds) {
        const deliveries = (await api(survivor, `/api/nodes/${id}/webhooks/deliveries`)).json.data as Array<{ eventId: string; state: string; event: unknown }>;
        if (deliveries.some((d) => d.state !== 'succeeded')) return false;
        for (const d of deliveries) expected.set(d.eventId, d.event);
      }
      return true;
    }, 120_000);
    const received = new Map<string, Set<string>>();
    for (const w of receiver.received) received.set(w.id, (received.get(w.id) ?? new Set()).add(w.body));
    expect([...expected.keys()].filter((id) => !received.has(id)), 'events never received').toEqual([]);
    // A retry after a kill may send an event again, but always as the same event under the same id.
    expect([...received].filter(([, bodies]) => bodies.size > 1).map(([id]) => id), 'one id, several bodies').toEqual([]);
    const byContent = new Map<string, string>();
    for (const [id, bodies] of received) {
      const body = [...bodies][0]!;
      expect(byContent.get(body), 'the same event under two ids').toBeUndefined();
      byContent.set(body, id);
    }
  }, 200_000);
});
