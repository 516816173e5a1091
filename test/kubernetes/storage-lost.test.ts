// A node whose volume claim is deleted, on RUNTIME=kubernetes on the project's test cluster: the
// claim goes once its pod does (pvc-protection holds it meanwhile), the reconcile loop sees it from
// the claims' watch and marks the node STORAGE_LOST; POST .../recover stops the pod, waits for the old
// claim to go, and the StatefulSet makes a new one: RUNNING, not initialised, and the wallet's
// mnemonic gives the same node pubkey. A pod Pending for scheduling is covered by the unit test of
// the decision (src/runtime/kubernetes/claim-state.test.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

const PASSWORD = 'node-password-123';

describeOnCluster('a node whose volume claim is deleted (test cluster)', () => {
  const namespace = testNamespace('lost');
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  let mnemonic: string;
  let pubkey: string;
  const claim = () => `data-rln-${nodeId}-0`;

  const bearer = (path: string, body?: object) =>
    rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}${path}`, {
      method: body ? 'POST' : 'GET',
      body: body && JSON.stringify(body),
      headers: { authorization: `Bearer ${alice.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    });
  const node = async () => (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;

  beforeAll(async () => {
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '64Mi', NODE_START_TIMEOUT_MS: '120000', ...SMALL_NODE_PODS });
    alice = await t.createUser();
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'lost', network: 'regtest' } });
    expect(r.status, r.text).toBe(200);
    nodeId = r.json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING', 120_000);
    const init = await t.call(`/api/nodes/${nodeId}/init`, { method: 'POST', token: alice.token, body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    mnemonic = init.json.data.mnemonic;
    expect((await bearer('/unlock', { password: PASSWORD })).status).toBe(200);
    pubkey = (await bearer('/nodeinfo')).json.pubkey;
  }, 300_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  });

  it('marks the node STORAGE_LOST once its claim is deleted, with NODE_STORAGE_LOST', async () => {
    await kubectl(['-n', namespace, 'delete', 'pvc', claim(), '--wait=false']);
    await until('the node to be STORAGE_LOST', async () => (await node()).status === 'STORAGE_LOST', 90_000, node);
    expect(await node()).toMatchObject({ status: 'STORAGE_LOST', locked: true });
    // The timeline shows an event once every transaction older than it has ended (db/node-event-feed.ts),
    // which on a shared PostgreSQL server can be a moment after it committed: polled, not read once.
    await until('the timeline to show NODE_STORAGE_LOST', async () => (await t.call(`/api/nodes/${nodeId}/events`, { token: alice.token })).text.includes('NODE_STORAGE_LOST'), 30_000);
    // The reconcile loop stops its pod, and with it the held claim goes.
    await until('the old claim to go', async () => !(await kubectlGet(namespace, 'pvc', claim())), 120_000);
  }, 300_000);

  it('recovers it on a new claim: RUNNING, not initialised; the mnemonic gives the same node pubkey', async () => {
    const r = await t.call(`/api/nodes/${nodeId}/recover`, { method: 'POST', token: alice.token });
    expect(r.status, r.text).toBe(200);
    await t.waitForStatus(alice, nodeId, 'RUNNING', 180_000);
    expect(await node()).toMatchObject({ initialized: false, locked: true });
    expect((await kubectlGet(namespace, 'pvc', claim())).status.phase).toBe('Bound');
    const init = await bearer('/init', { password: PASSWORD, mnemonic });
    expect(init.status, init.text).toBe(200);
    expect((await bearer('/unlock', { password: PASSWORD })).status).toBe(200);
    expect((await bearer('/nodeinfo')).json.pubkey).toBe(pubkey);
  }, 300_000);
});
