// A node's whole life on RUNTIME=kubernetes, through the public API, on the project's real test
// cluster: created as a StatefulSet, two Services and a volume claim with the expected spec;
// reached through both gateways; stopped (no pod, volume kept) and started with its wallet;
// upgraded to another image and rolled back from one that never becomes ready; repaired after
// objects are deleted by hand; its output exported across a restart; destroyed without a trace.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest, tlsRequest, type ClientCredentials } from '../gateway/gateway-client.ts';
import { downloadParts, waitForExport } from '../logs/export-helpers.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';
import { parseExposition, series } from '../helpers/metrics.ts';

const PASSWORD = 'node-password-123';

describeOnCluster('nodes on the kubernetes runtime (test cluster)', () => {
  const namespace = testNamespace('life');
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;
  let cert: ClientCredentials;
  let pubkey: string;
  const name = () => `rln-${nodeId}`;

  const bearer = (path: string, opts: { method?: string; body?: object } = {}) =>
    rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}${path}`, {
      method: opts.method,
      body: opts.body && JSON.stringify(opts.body),
      headers: { authorization: `Bearer ${alice.token}`, ...(opts.body ? { 'content-type': 'application/json' } : {}) },
    });
  const mtls = (path: string) => tlsRequest(t.config.userNodeUrl, `/nodes/${alice.id}/${nodeId}${path}`, { ...cert, ca: cert.certificateChain });
  const node = async () => (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;
  const action = async (verb: string) => {
    const r = await t.call(`/api/nodes/${nodeId}/${verb}`, { method: 'POST', token: alice.token });
    expect(r.status, r.text).toBeLessThan(300);
  };
  const podOf = () => kubectlGet(namespace, 'pod', `${name()}-0`);
  const unlock = async () => {
    const r = await bearer('/unlock', { method: 'POST', body: { password: PASSWORD } });
    expect(r.status, r.text).toBe(200);
  };

  beforeAll(async () => {
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '64Mi', NODE_START_TIMEOUT_MS: '120000', ...SMALL_NODE_PODS });
    alice = await t.createUser();
    bob = await t.createUser();
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  });

  it('creates a node as a StatefulSet, two Services and a volume claim, and runs it', async () => {
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'k1', network: 'regtest' } });
    expect(r.status, r.text).toBe(200);
    nodeId = r.json.data.nodeId;
    const running = await t.waitForStatus(alice, nodeId, 'RUNNING', 90_000);
    expect(running).toMatchObject({ locked: true, rln_commit_id: 'devnode-0.1.0' });

    const set = await kubectlGet(namespace, 'statefulset', name());
    expect(set.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'rln-cloud', 'rln-cloud/node-id': nodeId });
    expect(set.spec.replicas).toBe(1);
    const managed = JSON.parse(await kubectl(['-n', namespace, 'get', 'statefulset', name(), '-o', 'json', '--show-managed-fields']));
    expect(managed.metadata.managedFields.map((f: any) => f.manager)).toContain('rln-cloud');
    const pod = await podOf();
    expect(pod.spec.containers[0].image).toBe('localhost/devnode:devnode-0.1.0');
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod.spec.volumes.some((v: any) => v.projected || v.secret)).toBe(false);
    expect((await kubectlGet(namespace, 'pvc', `data-${name()}-0`)).status.phase).toBe('Bound');
    const peer = await kubectlGet(namespace, 'service', `${name()}-peer`);
    expect(peer.spec.type).toBe('NodePort');
    expect(running.peerPort).toBe(peer.spec.ports[0].nodePort);
    expect((await kubectlGet(namespace, 'service', name())).spec.ports[0]).toMatchObject({ port: 3001, protocol: 'TCP' });
  }, 300_000);

  it('reports its requests to the API server by verb and the pod log stream it follows (metrics)', async () => {
    const scrape = async () => parseExposition(await (await fetch(`http://127.0.0.1:${t.config.metricsPort}/metrics`)).text()).samples;
    const requests = (verb: string, samples: Map<string, number>) => samples.get(series('rlncloud_kubernetes_api_requests_total', { verb }));
    // The node's log claim is taken on its build's events: one stream, this replica's only node.
    const samples = await until('the log stream to be counted', async () => {
      const s = await scrape();
      return s.get('rlncloud_node_log_streams_open') === 1 && s;
    }, 30_000);
    // StatefulSets, pods, Services and volume claims (the last for storagePresent).
    expect(requests('list', samples)).toBe(4);
    expect(requests('watch', samples)).toBeGreaterThanOrEqual(4);
    // Two Services and the StatefulSet, applied by the create build.
    expect(requests('patch', samples)).toBeGreaterThanOrEqual(3);
    expect(requests('get', samples)).toBeGreaterThanOrEqual(2); // the namespace check, the log stream
  });

  it('reaches the pod through both gateways: init, unlock, nodeinfo', async () => {
    expect((await bearer('/nodeinfo')).status).toBe(403); // a fresh RLN is locked
    const init = await bearer('/init', { method: 'POST', body: { password: PASSWORD } });
    expect(init.status, init.text).toBe(200);
    await unlock();
    const info = await bearer('/nodeinfo');
    expect(info.status).toBe(200);
    pubkey = info.json.pubkey;
    const issued = await t.call(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token });
    expect(issued.status, issued.text).toBe(200);
    cert = issued.json;
    expect((await mtls('/nodeinfo')).json.pubkey).toBe(pubkey);
    expect(await node()).toMatchObject({ locked: false, initialized: true });
    // Another user's token reaches nothing of it.
    const foreign = await rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${bob.token}` } });
    expect(foreign.status).toBe(404);
  }, 300_000);

  it('stops to zero replicas keeping the volume, and starts with the same wallet', async () => {
    await action('stop');
    await t.waitForStatus(alice, nodeId, 'PAUSED', 90_000);
    expect((await kubectlGet(namespace, 'statefulset', name())).spec.replicas).toBe(0);
    expect(await podOf()).toBeUndefined();
    expect(await kubectlGet(namespace, 'pvc', `data-${name()}-0`)).toBeDefined();

    await action('start');
    await t.waitForStatus(alice, nodeId, 'RUNNING', 90_000);
    expect(await node()).toMatchObject({ locked: true, initialized: true });
    await unlock();
    expect((await bearer('/nodeinfo')).json.pubkey).toBe(pubkey);
  }, 300_000);

  it('upgrades to another image, and rolls back from one that never becomes ready', async () => {
    await t.server.services.releases.publish('devnode-0.2.0');
    await action('upgrade');
    await until('the upgrade to finish', async () => {
      const n = await node();
      return n.status === 'RUNNING' && n.rln_commit_id === 'devnode-0.2.0' && n;
    }, 90_000);
    expect((await podOf()).spec.containers[0].image).toBe('localhost/devnode:devnode-0.2.0');

    await t.server.services.releases.publish('devnode-9.9.9-missing');
    await action('upgrade');
    const after = await until('the rollback', async () => {
      const n = await node();
      return n.status === 'RUNNING' && n.builds.at(-1).buildComplete && n;
    }, 120_000, node);
    expect(after.rln_commit_id).toBe('devnode-0.2.0');
    expect(after.builds.at(-1)).toMatchObject({ action: 'upgrade', buildStatus: 'FAILURE', imageVersion: 'devnode-9.9.9-missing' });
    expect(after.builds.at(-1).error).toMatch(/cannot be pulled.*rolled back to devnode-0\.2\.0/);
    expect((await podOf()).spec.containers[0].image).toBe('localhost/devnode:devnode-0.2.0');
    await unlock();
    expect((await mtls('/nodeinfo')).json.pubkey).toBe(pubkey);
  }, 300_000);

  it('repairs objects deleted by hand, and a deleted pod comes back locked', async () => {
    await kubectl(['-n', namespace, 'delete', 'service', name(), `${name()}-peer`]);
    await until('the Services to be recreated', async () => (await kubectlGet(namespace, 'service', name())) && (await kubectlGet(namespace, 'service', `${name()}-peer`)), 60_000);
    await until('the node to answer again', async () => (await bearer('/nodeinfo')).status === 200, 60_000, async () => { const r = await bearer('/nodeinfo'); return [r.status, r.headers, r.text, (await node()).status]; });

    await kubectl(['-n', namespace, 'delete', 'pod', `${name()}-0`, '--wait=false']);
    await until('the node to be marked locked', async () => (await node()).locked === true, 60_000);
    await until('the pod to answer locked', async () => (await bearer('/nodeinfo')).status === 403, 90_000);
    await unlock();

    await kubectl(['-n', namespace, 'delete', 'statefulset', name(), '--wait=false']);
    // The pod just recreated by Kubernetes was on its way (`starting`), which counts no restart
    // against the node: the reconcile loop repairs the deleted StatefulSet on its next pass, not
    // after a backoff (it once waited 30-60 s here).
    await until('the StatefulSet to be recreated', async () => {
      const set = await kubectlGet(namespace, 'statefulset', name());
      return set && !set.metadata.deletionTimestamp && set;
    }, 20_000);
    await until('the node to be RUNNING and answer', async () => (await node()).status === 'RUNNING' && (await bearer('/nodeinfo')).status === 403, 120_000);
    await unlock();
    expect((await bearer('/nodeinfo')).json.pubkey).toBe(pubkey); // the same volume: the same wallet
  }, 420_000);

  it('exports output from before the last restart', async () => {
    const r = await t.call(`/api/nodes/${nodeId}/logs`, { method: 'POST', token: alice.token, body: {} });
    expect(r.status, r.text).toBe(200);
    const done = await waitForExport(t.call, alice.token, nodeId, r.json.taskId);
    expect(done.status, done.text).toBe(200);
    const text = (await downloadParts(done.json.data)).join('');
    // devnode prints one start-up line per start: the first pod's, the upgrades' and the restarts'.
    const starts = text.split('\n').filter((l) => / stdout .*devnode .* started/.test(l));
    expect(starts.length).toBeGreaterThanOrEqual(4);
    expect(starts.some((l) => l.includes('devnode-0.1.0'))).toBe(true);
    expect(starts.some((l) => l.includes('devnode-0.2.0'))).toBe(true);
  }, 300_000);

  it('destroys every object and the volume', async () => {
    const r = await t.call('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: nodeId } });
    expect(r.status, r.text).toBe(200);
    await t.waitForStatus(alice, nodeId, 'DESTROYED', 120_000);
    for (const kind of ['statefulset', 'service', 'pvc', 'pod']) {
      const left = await kubectl(['-n', namespace, 'get', kind, '-l', `rln-cloud/node-id=${nodeId}`, '-o', 'name']);
      expect(left.trim(), kind).toBe('');
    }
  }, 300_000);
});
