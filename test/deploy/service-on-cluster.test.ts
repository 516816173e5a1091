// The service itself deployed on the test cluster from deploy/kubernetes (overlay test-cluster), as
// an operator would: its image built without Docker and imported, a fresh PostgreSQL database,
// Secrets mounted as files, two replicas behind NodePort Services, RUNTIME=kubernetes with the
// pod's own service account. Then, from the host: users made with the operator CLI (in a replica
// and on the host), a node created and RUNNING as a pod of the cluster, reached through the bearer
// and the mutual-TLS gateway, its output exported to the S3 bucket, destroyed; everything torn
// down at the end (the namespaces, and with them the node pods).
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOnCluster, kubectl } from '../helpers/kubernetes.ts';
import {
  deployService,
  explained,
  NODES_NAMESPACE,
  SERVICE_IMAGE,
  SERVICE_NAMESPACE,
  servicePods,
  type DeployedService,
  type DeployedUser,
} from '../helpers/deployed-service.ts';
import type { ClientCredentials } from '../gateway/gateway-client.ts';

const PASSWORD = 'node-password-123';
const SERVICE_ACCOUNT = `system:serviceaccount:${SERVICE_NAMESPACE}:rln-cloud`;
const pem = (text: string) => text.replace(/\s+/g, '');

// Once per CI run, in its PostgreSQL pass (the deployed replicas use the machine's PostgreSQL
// either way; the PGlite pass would only repeat it).
const describeDeployed = process.env.TEST_DATABASE_URL ? describeOnCluster : describe.skip;

describeDeployed('the service deployed on the test cluster (deploy/kubernetes)', () => {
  let svc: DeployedService;
  let alice: DeployedUser;
  let nodeId: string;
  let cert: ClientCredentials;

  beforeAll(async () => {
    svc = await deployService({ replicas: 2 });
  }, 900_000);
  afterAll(async () => {
    await svc?.teardown();
    if (svc) console.info(`deployment steps (s): ${JSON.stringify(svc.timings)}`);
  }, 600_000);

  it('runs two ready replicas of the image as a non-root user on a read-only root, with the Secrets as files', async () => {
    const pods = await servicePods();
    expect(pods.filter((p) => p.ready && !p.deleting)).toHaveLength(2);
    const pod = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'get', 'pod', pods[0]!.name, '-o', 'json']));
    expect(pod.spec.containers[0]).toMatchObject({ image: SERVICE_IMAGE, imagePullPolicy: 'Never' });
    expect(pod.spec.containers[0].securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(pod.spec.serviceAccountName).toBe('rln-cloud');

    // Inside a replica: uid 1000, the Secret files readable (by group 1000, nobody else), / read-only.
    const probe = `const fs = require('fs');
      const mode = (p) => (fs.statSync(p).mode & 0o777).toString(8);
      let rootWritable = true; try { fs.writeFileSync('/app/x', ''); } catch { rootWritable = false; }
      console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), rootWritable,
        key: mode('/etc/rln-cloud/ca/ca.key'), url: fs.readFileSync('/etc/rln-cloud/database/url', 'utf8').startsWith('postgres://'),
        token: fs.existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token') }));`;
    const inside = JSON.parse(await kubectl(['-n', SERVICE_NAMESPACE, 'exec', pods[0]!.name, '--', 'node', '-e', probe]));
    expect(inside).toEqual({ uid: 1000, gid: 1000, rootWritable: false, key: '440', url: true, token: true });
  }, 120_000);

  it('gives the service account exactly the rights its runtime uses, in the nodes namespace only', async () => {
    const can = async (verb: string, resource: string, namespace = NODES_NAMESPACE) => {
      const [kind, subresource] = resource.split('/');
      const args = ['auth', 'can-i', verb, kind!, ...(subresource ? [`--subresource=${subresource}`] : []), '-n', namespace, `--as=${SERVICE_ACCOUNT}`];
      return (await kubectl(args).catch(() => 'no')).trim();
    };
    for (const [verb, resource] of [
      ['watch', 'statefulsets.apps'], ['patch', 'statefulsets.apps'], ['create', 'services'], ['delete', 'pods'],
      ['get', 'pods/log'], ['delete', 'persistentvolumeclaims'],
    ]) expect(`${verb} ${resource}: ${await can(verb!, resource!)}`).toBe(`${verb} ${resource}: yes`);
    for (const [verb, resource, namespace] of [
      ['create', 'pods'], ['get', 'secrets'], ['create', 'persistentvolumeclaims'], ['list', 'pods', SERVICE_NAMESPACE], ['list', 'statefulsets.apps', 'default'],
    ]) expect(`${verb} ${resource} in ${namespace ?? NODES_NAMESPACE}: ${await can(verb!, resource!, namespace)}`).toBe(`${verb} ${resource} in ${namespace ?? NODES_NAMESPACE}: no`);
    // The start-up namespace check needed no more than that: no replica logged a refusal.
    for (const pod of await servicePods()) {
      const logs = await kubectl(['-n', SERVICE_NAMESPACE, 'logs', pod.name]);
      expect(logs).not.toMatch(/forbidden|does not allow|could not check the nodes namespace/i);
    }
  }, 120_000);

  it('takes users from the operator CLI, in a replica and on the host, and signs with the keyring from its Secret', async () => {
    alice = await svc.createUser('starter');
    expect((await svc.api('/api/nodes', { token: alice.token })).json).toEqual({ nodes: [] });
    expect((await svc.api('/api/nodes')).status).toBe(401);
    const key = await svc.api('/api/webhook-public-key', { token: alice.token });
    expect(key.status, key.text).toBe(200);
    expect(pem(key.json.data)).toBe(pem(svc.secrets.webhookPublicKeyPem));
  }, 120_000);

  it('runs a node as a pod of the cluster and reaches it through both gateways', async () => {
    const created = await svc.api('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'deployed', network: 'regtest' } });
    expect(created.status, created.text).toBe(200);
    nodeId = created.json.data.nodeId;
    const running = await svc.waitForNode(alice, nodeId, 'RUNNING');
    expect(running).toMatchObject({ locked: true, rln_commit_id: 'devnode-0.1.0', peerDNS: '198.18.1.1' });
    const pod = JSON.parse(await kubectl(['-n', NODES_NAMESPACE, 'get', 'pod', `rln-${nodeId}-0`, '-o', 'json']));
    expect(pod.spec.containers[0].image).toBe('localhost/devnode:devnode-0.1.0');

    await explained('calling the node through the bearer gateway', async () => {
      expect((await svc.bearer(alice, nodeId, '/nodeinfo')).status).toBe(403); // a fresh RLN is locked
      const init = await svc.bearer(alice, nodeId, '/init', { method: 'POST', body: { password: PASSWORD } });
      expect(init.status, init.text).toBe(200);
      const unlock = await svc.bearer(alice, nodeId, '/unlock', { method: 'POST', body: { password: PASSWORD } });
      expect(unlock.status, unlock.text).toBe(200);
    });
    const info = await svc.bearer(alice, nodeId, '/nodeinfo');
    expect(info.status, info.text).toBe(200);

    const issued = await svc.api(`/api/nodes/${nodeId}/generate-cert`, { method: 'POST', token: alice.token });
    expect(issued.status, issued.text).toBe(200);
    cert = issued.json;
    // issued by the CA from the Secret, which every replica shares
    expect(pem(cert.certificateChain)).toContain(pem(svc.secrets.caCertificatePem));
    // Several calls: the NodePort spreads connections over both replicas, each with its own
    // gateway certificate from the shared CA.
    for (let i = 0; i < 6; i++) {
      const viaMtls = await explained('calling the node through the mutual-TLS gateway', () => svc.mtls(alice, nodeId, '/nodeinfo', cert));
      expect(viaMtls.status, viaMtls.text).toBe(200);
      expect(viaMtls.json.pubkey).toBe(info.json.pubkey);
    }
    expect((await svc.api(`/api/nodes/${nodeId}`, { token: alice.token })).json.data).toMatchObject({ locked: false, initialized: true });
  }, 400_000);

  it("exports the node's output to the S3 bucket", async () => {
    const started = await svc.api(`/api/nodes/${nodeId}/logs`, { method: 'POST', token: alice.token });
    expect(started.status, started.text).toBeLessThan(300);
    let result = await svc.api(`/api/nodes/${nodeId}/logs?taskId=${started.json.taskId}`, { token: alice.token });
    for (const deadline = Date.now() + 120_000; result.status === 202 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 1_000));
      result = await svc.api(`/api/nodes/${nodeId}/logs?taskId=${started.json.taskId}`, { token: alice.token });
    }
    expect(result.json, result.text).toMatchObject({ status: 'SUCCEEDED' });
    const urls: string[] = result.json.data;
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.every((u) => u.startsWith('http://198.18.1.1:29000/'))).toBe(true);
    const text = (await Promise.all(urls.map(async (u) => gunzipSync(Buffer.from(await (await fetch(u)).arrayBuffer())).toString('utf8')))).join('');
    expect(text).toMatch(/devnode/i);
  }, 200_000);

  it('destroys the node: its pod and volume go', async () => {
    const r = await svc.api('/api/nodes', { method: 'DELETE', token: alice.token, body: { destroyNodeId: nodeId } });
    expect(r.status, r.text).toBe(200);
    await svc.waitForNode(alice, nodeId, 'DESTROYED');
    const left = await kubectl(['-n', NODES_NAMESPACE, 'get', 'statefulsets,services,pods,pvc', '-o', 'name']);
    expect(left.trim()).toBe('');
  }, 300_000);
});
