// The authentication rollout (issue #40, point 5) on the test cluster (RUNTIME=kubernetes), where it
// matters: a pod keeps the command line it was started with until it is replaced, so a node created
// before root keys existed runs with --disable-authentication whatever its StatefulSet says next.
// The node here is created by the service the way it was before issue #40 (its runtime without the
// root key store: no key, --disable-authentication), then the runtime gets the store, as the
// upgraded service's has. The rollout's restart build replaces the pod: it runs with
// --root-public-key, the node is locked again, and its port refuses a caller without a Biscuit.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { createLogger } from '../../src/logger.ts';
import { readKubernetesConfig } from '../../src/runtime/kubernetes/settings.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/runtime.ts';
import type { NodeRootKeys } from '../../src/runtime/types.ts';
import { deleteNamespace, describeOnCluster, kubectl, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

const PASSWORD = 'authentication-rollout-k8s-1';

describeOnCluster('the authentication rollout on the kubernetes runtime (test cluster)', () => {
  const namespace = testNamespace('auth-rollout');
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  let runtime: KubernetesRuntime;

  /** What the running container was started with, read in it. */
  const daemonArgs = async () =>
    (await kubectl(['-n', namespace, 'exec', `rln-${nodeId}-0`, '-c', 'rln', '--', 'node', '-e', "process.stdout.write(require('fs').readFileSync('/proc/1/cmdline', 'utf8'))"])).split('\0');
  /** The node's port reached without the gateways and without a Biscuit. */
  const direct = async () => {
    const { host, port } = runtime.endpoint({ nodeId, network: 'regtest', imageVersion: '', restPort: null, peerPort: null });
    return rawRequest(`http://${host}:${port}`, '/nodeinfo');
  };
  const record = async () => (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;

  beforeAll(async () => {
    const problems: string[] = [];
    const config = readKubernetesConfig({ KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '64Mi', ...SMALL_NODE_PODS }, problems);
    expect(problems).toEqual([]);
    runtime = await KubernetesRuntime.start({ config, takenPorts: async () => new Set<number>(), defaultPeerHost: '127.0.0.1', log: createLogger('warn') });
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, NODE_START_TIMEOUT_MS: '120000' }, { runtime });
    alice = await t.createUser();
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'older', network: 'regtest' } });
    expect(r.status, r.text).toBe(200);
    nodeId = r.json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING', 180_000);
    // The service is upgraded: its runtime asks for root keys from now on. The pod runs on as it was.
    // (The runtime's options are private: reached here only to stand in for the upgrade.)
    (runtime as unknown as { opts: { rootKeys?: NodeRootKeys } }).opts.rootKeys = t.server.nodeCalls.bearers as unknown as NodeRootKeys;
  }, 300_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  }, 180_000);

  it('before the rollout, the pod answers anyone: it was started with --disable-authentication and has no root key', async () => {
    expect(await daemonArgs()).toContain('--disable-authentication');
    expect((await t.server.db.query('SELECT 1 FROM node_root_keys WHERE node_id = $1', [nodeId])).length).toBe(0);
    const r = await direct();
    expect(r.status, r.text).toBe(403); // the locked node's own answer, to a caller with no credential
    const init = await t.call(`/api/nodes/${nodeId}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    expect((await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } })).status).toBe(200);
  }, 60_000);

  it('the rollout replaces the pod: it runs with --root-public-key, comes back locked, and its port refuses a caller without a Biscuit', async () => {
    const started = await t.server.services.authenticationRollout.start({ concurrency: 5, failureBudget: 0 });
    expect(started).toMatchObject({ state: 'running', nodes: 1, started: 1 });
    const done = await until(
      'the rollout to complete',
      async () => {
        const s = await t.server.services.authenticationRollout.status();
        return s.state === 'completed' ? s : undefined;
      },
      240_000,
      () => t.server.services.authenticationRollout.status(),
    );
    expect(done.nodes).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await record()).toMatchObject({ status: 'RUNNING', locked: true });
    expect((await record()).builds.at(-1)).toMatchObject({ action: 'restart', buildStatus: 'SUCCESS' });

    const key = (await t.server.db.query<{ public_key: string }>('SELECT public_key FROM node_root_keys WHERE node_id = $1', [nodeId]))[0]?.public_key;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const args = await daemonArgs();
    expect(args[args.indexOf('--root-public-key') + 1]).toBe(key);
    expect(args).not.toContain('--disable-authentication');
    const r = await until('the new pod to answer', async () => direct().catch(() => undefined), 60_000);
    expect(r.status).toBe(401);
    // Through the service, which now sends it a Biscuit of its key, the wallet unlocks as before.
    const unlocked = await t.call(`/api/nodes/${nodeId}/unlock`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(unlocked.status, unlocked.text).toBe(200);
  }, 300_000);
});
