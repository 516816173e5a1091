// What goes wrong on a cluster ends as a FAILED build with a reason a user can act on, never a
// stuck node or a 500: an API server that cannot be reached, a pod that cannot be scheduled, a
// volume that cannot be bound, a role that forbids a verb. The first needs no cluster at all.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { deleteNamespace, describeOnCluster, kubectl, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

async function createAndSettle(t: TestServer, user: TestUser, timeoutMs = 90_000) {
  const r = await t.call('/api/nodes', { method: 'POST', token: user.token, body: { name: 'f', network: 'regtest' } });
  expect(r.status, r.text).toBe(200);
  const nodeId = r.json.data.nodeId as string;
  return until(
    'the create build to finish',
    async () => {
      const n = (await t.call(`/api/nodes/${nodeId}`, { token: user.token })).json.data;
      return n.builds[0]?.buildComplete && n;
    },
    timeoutMs,
  );
}

describe('kubernetes runtime: an API server that cannot be reached', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rln-kc-'));
  let t: TestServer;
  let user: TestUser;

  beforeAll(async () => {
    // Port 1 is closed on these machines: every connection is refused at once.
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: away, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: away, context: {cluster: away, user: u}}]
current-context: away
`,
    );
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: kubeconfig });
    user = await t.createUser();
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts and answers the API; a build fails with the reason after its retries', async () => {
    expect((await t.call('/api/nodes', { token: user.token })).status).toBe(200);
    // Each attempt retries its call for 30 s (a control-plane restart is ridden out), three attempts.
    const node = await createAndSettle(t, user, 170_000);
    expect(node.status).toBe('FAILED');
    expect(node.builds[0]).toMatchObject({ buildStatus: 'FAILURE' });
    expect(node.builds[0].error).toMatch(/Kubernetes API server could not be reached to apply Service/);
  }, 200_000);
});

describeOnCluster('kubernetes runtime faults (test cluster)', () => {
  const namespace = testNamespace('faults');
  const servers: TestServer[] = [];
  const start = async (env: Record<string, string>) => {
    const t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '16Mi', ...SMALL_NODE_PODS, ...env });
    servers.push(t);
    return { t, user: await t.createUser() };
  };
  afterAll(async () => {
    for (const t of servers) await t.stop();
    await deleteNamespace(namespace);
  });

  it('a pod too large for the cluster fails its build with the scheduler reason', async () => {
    const { t, user } = await start({ K8S_CPU_REQUEST: '64', K8S_CPU_LIMIT: '64', NODE_START_TIMEOUT_MS: '4000' });
    const node = await createAndSettle(t, user);
    expect(node.status).toBe('FAILED');
    expect(node.builds[0].error).toMatch(/cannot be scheduled \(Unschedulable\).*Insufficient cpu/);
  });

  it('a volume that cannot be bound fails its build with the reason', async () => {
    const { t, user } = await start({ K8S_STORAGE_CLASS: 'no-such-class', NODE_START_TIMEOUT_MS: '4000' });
    const node = await createAndSettle(t, user);
    expect(node.status).toBe('FAILED');
    expect(node.builds[0].error).toMatch(/cannot be scheduled.*PersistentVolumeClaims/);
  });

  it('a role that forbids a verb fails the build with the 403 and the verb', async () => {
    // A service account allowed to read but not to write StatefulSets.
    await kubectl(['create', 'namespace', namespace]).catch(() => {});
    await kubectl(['-n', namespace, 'create', 'serviceaccount', 'limited']);
    await kubectl(['-n', namespace, 'create', 'role', 'limited', '--verb=get,list,watch,create,patch,delete', '--resource=services,pods,persistentvolumeclaims']);
    await kubectl(['-n', namespace, 'create', 'role', 'limited-read', '--verb=get,list,watch', '--resource=statefulsets.apps']);
    await kubectl(['-n', namespace, 'create', 'rolebinding', 'limited', '--role=limited', `--serviceaccount=${namespace}:limited`]);
    await kubectl(['-n', namespace, 'create', 'rolebinding', 'limited-read', '--role=limited-read', `--serviceaccount=${namespace}:limited`]);
    const secret = await until('the service account token', async () => {
      const name = (await kubectl(['-n', namespace, 'get', 'serviceaccount', 'limited', '-o', 'jsonpath={.secrets[0].name}'])).trim();
      return name && name;
    });
    const token = Buffer.from((await kubectl(['-n', namespace, 'get', 'secret', secret, '-o', 'jsonpath={.data.token}'])).trim(), 'base64').toString();
    const server = (await kubectl(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])).trim();
    const dir = mkdtempSync(join(tmpdir(), 'rln-kc-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]
users: [{name: limited, user: {token: "${token}"}}]
contexts: [{name: c, context: {cluster: c, user: limited, namespace: ${namespace}}}]
current-context: c
`,
    );
    const { t, user } = await start({ KUBECONFIG: kubeconfig });
    const node = await createAndSettle(t, user);
    expect(node.status).toBe('FAILED');
    expect(node.builds[0].error).toMatch(/role does not allow it to apply StatefulSet .*\(403\)/);
    rmSync(dir, { recursive: true, force: true });
  });
});
