// Node logs, collected once (issue #28), on the test cluster: two, then three `npm start` replicas
// on one PostgreSQL and one S3 store (s3rver). Each node's pod log is followed by exactly one
// replica (its claim's holder); a node keeps logging (requests through the gateway: devnode logs
// one line per request) while the replica following it is killed; another takes the claim over
// after LOG_CLAIM_TTL_SECONDS and resumes after the last stored line; the node's pod is replaced
// before another replica starts. Exports made from every replica then hold the same daemon
// output, every request's line exactly once, before and after each hand-over, and the first
// pod's output too.
//
// Needs PostgreSQL (several replicas cannot share embedded PGlite): runs in CI's PostgreSQL pass.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { CertificateAuthority } from '../../src/pki/certificate-authority.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';
import { callService, runCli, serviceEnv, sharedSealKeyFile, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { startS3Server } from '../logs/s3-server.ts';
import { downloadParts } from '../logs/export-helpers.ts';

const WEB_PASSWORD = 'web-password-123';
const NODES = 2;
const ROUTE = '/networkinfo';
const describeReplicas = process.env.TEST_DATABASE_URL ? describeOnCluster : describe.skip;

describeReplicas('node logs collected once, across replicas (kubernetes runtime, test cluster)', () => {
  const namespace = testNamespace('nodelogs');
  const shared = mkdtempSync(join(tmpdir(), 'rln-node-logs-'));
  let database: TestDatabase;
  let sql: pg.Client;
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let sharedEnv: Record<string, string>;
  const replicas: ServiceProcess[] = [];
  let token: string;
  let userId: string;
  const nodeIds: string[] = [];
  /** Requests the node answered (one daemon line each). */
  let answered = 0;

  const startReplica = async (name: string) => {
    const replica = await startServiceProcess(await serviceEnv(join(shared, name), sharedEnv), 120_000);
    replicas.push(replica);
    return replica;
  };
  const alive = () => replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  const api = (replica: ServiceProcess, path: string, init: { method?: string; body?: unknown } = {}) => callService(replica, token, path, init);
  const replicaId = (r: ServiceProcess) => /"replica":"([^"]+)"/.exec(r.output())?.[1];
  const claims = async () =>
    (await sql.query<{ node_id: string; holder: string | null }>(`SELECT node_id, holder FROM node_log_claims WHERE expires_at > now() AND holder IS NOT NULL`)).rows;
  const holderOf = async (nodeId: string) => {
    const holder = (await claims()).find((c) => c.node_id === nodeId)?.holder;
    return alive().find((r) => holder !== undefined && replicaId(r) === holder);
  };
  /** Every node followed by exactly one live replica. */
  const eachNodeFollowedOnce = async () => {
    const held = await claims();
    const live = new Set(alive().map(replicaId));
    return nodeIds.every((id) => held.filter((c) => c.node_id === id && live.has(c.holder!)).length === 1);
  };

  /** Keeps the node logging: one request at a time through `via`, until stopped. */
  const keepLogging = (via: () => ServiceProcess, nodeId: string) => {
    let running = true;
    const done = (async () => {
      while (running) {
        const replica = via();
        const r = await rawRequest(`http://127.0.0.1:${replica.env.NODE_API_PORT}`, `/${userId}/${nodeId}${ROUTE}`, {
          headers: { authorization: `Bearer ${token}` },
        }).catch(() => undefined);
        // Answered by the daemon (it logged the request), not by the gateway on its own (its errors name `rln_cloud`).
        if (r && r.json?.rln_cloud === undefined) answered++;
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    return async () => {
      running = false;
      await done;
    };
  };

  /** The daemon output part of an export made through `replica` (the header names the task and time). */
  const exportFrom = async (replica: ServiceProcess, nodeId: string) => {
    const started = await api(replica, `/api/nodes/${nodeId}/logs`, { method: 'POST' });
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const urls = await until(`the export through ${replicaId(replica)}`, async () => {
      const r = await api(replica, `/api/nodes/${nodeId}/logs?taskId=${started.json.taskId}`);
      return r.status === 200 && Array.isArray(r.json.data) && r.json.data.length > 0 && (r.json.data as string[]);
    }, 120_000);
    const text = (await downloadParts(urls)).join('');
    return text.slice(text.indexOf('# daemon output (')).split('\n').slice(1).join('\n');
  };
  const requestLines = (output: string) => output.split('\n').filter((l) => l.includes(` GET ${ROUTE} `));

  /** Waits until what the node printed is stored: segments are written every LOG_SEGMENT_SECONDS. */
  const settle = () => new Promise((r) => setTimeout(r, 4_000));

  beforeAll(async () => {
    database = await createTestDatabase();
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    s3 = await startS3Server();
    const ca = await CertificateAuthority.create('node logs test CA');
    writeFileSync(join(shared, 'ca.pem'), ca.certificatePem);
    writeFileSync(join(shared, 'ca.key'), ca.privateKeyPem, { mode: 0o600 });
    writeFileSync(join(shared, 'database-url'), database.url!);
    sharedEnv = {
      DATABASE_URL_FILE: join(shared, 'database-url'),
      RUNTIME: 'kubernetes',
      KUBECONFIG: testKubeconfig!,
      K8S_NAMESPACE: namespace,
      K8S_STORAGE_SIZE: '16Mi',
      ...SMALL_NODE_PODS,
      NODE_START_TIMEOUT_MS: '120000',
      CA_CERT_FILE: join(shared, 'ca.pem'),
      // One unlock seal for every replica (UNLOCK_SEAL_KEY_FILE: shared): each opens the nodes' root keys.
      UNLOCK_SEAL_KEY_FILE: sharedSealKeyFile(shared),
      CA_KEY_FILE: join(shared, 'ca.key'),
      WEBHOOK_SIGNING_KEY_FILE: join(shared, 'webhook-keys.json'),
      BOOTSTRAP_DEV_USER: 'false',
      JOB_POLL_INTERVAL_MS: '300',
      RECONCILE_INTERVAL_MS: '2000',
      SHUTDOWN_TIMEOUT: '5s',
      LOG_CLAIM_TTL_SECONDS: '3',
      LOG_SEGMENT_SECONDS: '1',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'info',
      ...s3.env,
    };
    await startReplica('a');
    await startReplica('b');
    const user = runCli(replicas[0]!.env, ['user', 'create', `node-logs-${Date.now()}@example.com`, '--plan', 'scale', '--password', WEB_PASSWORD]);
    userId = user.id;
    token = runCli(replicas[0]!.env, ['token', 'create', user.email, '--name', 'node-logs']).token;
    for (let i = 0; i < NODES; i++) {
      const created = await api(replicas[i % 2]!, '/api/nodes', { method: 'POST', body: { name: `l${i}`, network: 'regtest' } });
      expect(created.status, JSON.stringify(created.json)).toBe(200);
      nodeIds.push(created.json.data.nodeId);
    }
    for (const id of nodeIds) await until(`node ${id} RUNNING`, async () => (await api(replicas[0]!, `/api/nodes/${id}`)).json.data?.status === 'RUNNING', 180_000);
  }, 400_000);

  afterAll(async () => {
    for (const r of replicas) await r.stop('SIGKILL').catch(() => {});
    await deleteNamespace(namespace);
    await sql?.end();
    await database?.drop().catch(() => {});
    await s3?.stop();
    rmSync(shared, { recursive: true, force: true });
  });

  async function killFollowerWhileLogging(nodeId: string) {
    await until('each node followed by exactly one replica', eachNodeFollowedOnce, 30_000, claims);
    const victim = (await holderOf(nodeId))!;
    expect(victim).toBeDefined();
    const survivors = () => alive().filter((r) => r !== victim);
    const stopLogging = keepLogging(() => survivors()[0]!, nodeId);
    await until('lines before the kill', async () => answered >= 10, 30_000);
    const before = answered;
    await victim.stop('SIGKILL');
    // Keeps logging through the hand-over (the claim expires after 3 s) and some seconds past it.
    await until('another replica to follow the node', async () => (await holderOf(nodeId)) !== undefined, 30_000, claims);
    const takenOverAt = answered;
    await until('lines after the hand-over', async () => answered >= takenOverAt + 10, 30_000);
    await stopLogging();
    expect(answered).toBeGreaterThan(before);
    await settle();
    await until('each node followed by exactly one replica after the kill', eachNodeFollowedOnce, 30_000, claims);
  }

  it('with two replicas: the follower killed mid-logging, both replicas export the same output with every line once', async () => {
    const [nodeId] = nodeIds as [string];
    await killFollowerWhileLogging(nodeId);
    // The pod replaced (its output gone from the kubelet) before the next replica starts.
    const pod = `rln-${nodeId}-0`;
    const uid = (await kubectlGet(namespace, 'pod', pod)).metadata.uid;
    await kubectl(['-n', namespace, 'delete', 'pod', pod, '--wait=false']);
    await until('the pod replaced and the node RUNNING', async () => {
      const now = await kubectlGet(namespace, 'pod', pod);
      return now && now.metadata.uid !== uid && (await api(alive()[0]!, `/api/nodes/${nodeId}`)).json.data?.status === 'RUNNING';
    }, 180_000);
    await settle();
    // Two replicas again: the survivor and one started after the kill and the replacement, which
    // never saw the first pod.
    await startReplica('c');
    const [x, y] = alive() as [ServiceProcess, ServiceProcess];
    const [fromX, fromY] = [await exportFrom(x, nodeId), await exportFrom(y, nodeId)];
    expect(fromY).toBe(fromX);
    expect(requestLines(fromX)).toHaveLength(answered);
    // devnode's start-up lines: the first pod's, long before any replica was killed, and the new one's.
    expect(fromX.split('\n').filter((l) => / stdout .*devnode .*started/.test(l)).length).toBeGreaterThanOrEqual(2);
  }, 300_000);

  it('with three replicas: the follower killed again, the two left export the same output, a continuation of the first', async () => {
    const [nodeId] = nodeIds as [string];
    const first = await exportFrom(alive()[0]!, nodeId);
    await startReplica('d');
    expect(alive()).toHaveLength(3);
    await until('the nodes shared out over three replicas, each followed once', eachNodeFollowedOnce, 30_000, claims);
    await killFollowerWhileLogging(nodeId);
    const exports = [];
    for (const r of alive()) exports.push(await exportFrom(r, nodeId));
    expect(exports).toHaveLength(2);
    expect(exports[1]).toBe(exports[0]);
    expect(exports[0]!.startsWith(first)).toBe(true);
    expect(requestLines(exports[0]!)).toHaveLength(answered);
    // Every line in time order: segments concatenated by number, each replica's in turn.
    const times = exports[0]!.split('\n').filter(Boolean).map((l) => l.slice(0, 24));
    expect([...times].sort()).toEqual(times);
  }, 300_000);
});
