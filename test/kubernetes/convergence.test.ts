// Convergence on RUNTIME=kubernetes: the real service (npm start) killed with SIGKILL in the middle
// of a create build is started again and the build finishes (server-side apply is idempotent, so
// applying again is harmless); the API server restarted in the middle of a build does not lose it
// either (the watches resume, the build's calls are retried).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { callService, repoRoot, serviceEnv, startServiceProcess, waitForServiceNode, type ServiceProcess } from '../helpers/service-process.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, until } from '../helpers/kubernetes.ts';

describeOnCluster('kubernetes runtime: the service killed mid-build (test cluster)', () => {
  const namespace = testNamespace('crash');
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-k8s-crash-'));
  let svc: ServiceProcess;
  let token: string;

  beforeAll(async () => {
    const env = await serviceEnv(dataDir, { RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '16Mi', RECONCILE_INTERVAL_MS: '1000' });
    svc = await startServiceProcess(env);
    token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
  }, 120_000);
  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await deleteNamespace(namespace);
  });

  it('finishes a create build after a kill -9 while the pod starts', async () => {
    const r = await callService(svc, token, '/api/nodes', { method: 'POST', body: { name: 'crash', network: 'regtest' } });
    expect(r.status).toBe(200);
    const nodeId = r.json.data.nodeId as string;
    // Killed once the build has applied the StatefulSet, before the pod is ready.
    await until('the StatefulSet to exist', () => kubectlGet(namespace, 'statefulset', `rln-${nodeId}`), 60_000);
    process.kill(svc.serverPid(), 'SIGKILL');
    await svc.stop('SIGKILL');

    svc = await startServiceProcess(svc.env);
    const node = await waitForServiceNode(svc, token, nodeId, 'RUNNING', 120_000);
    expect(node.locked).toBe(true);
    expect(node.builds).toHaveLength(1);
    expect(node.builds[0]).toMatchObject({ action: 'create', buildStatus: 'SUCCESS' });
    const pods = await kubectl(['-n', namespace, 'get', 'pods', '-l', `rln-cloud/node-id=${nodeId}`, '-o', 'name']);
    expect(pods.trim().split('\n')).toEqual([`pod/rln-${nodeId}-0`]);
    const answer = await fetch(`${node.invoke_url}nodeinfo`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(403); // the pod answers, locked
  }, 240_000);
});

describeOnCluster('kubernetes runtime: the API server restarted mid-build (test cluster)', () => {
  const namespace = testNamespace('apiserver');
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '16Mi', NODE_START_TIMEOUT_MS: '90000' });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  });

  it('finishes the build and keeps answering the API while the API server is away', async () => {
    const user = await t.createUser('starter');
    const r = await t.call('/api/nodes', { method: 'POST', token: user.token, body: { name: 'restart', network: 'regtest' } });
    expect(r.status, r.text).toBe(200);
    const nodeId = r.json.data.nodeId as string;
    await until('the StatefulSet to exist', () => kubectlGet(namespace, 'statefulset', `rln-${nodeId}`), 60_000);
    const restart = promisify(execFile)(join(repoRoot, 'scripts/test-cluster.sh'), ['restart-apiserver']);
    // The management API does not depend on the cluster.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await t.call(`/api/nodes/${nodeId}`, { token: user.token })).status).toBe(200);
    await restart;
    const node = await t.waitForStatus(user, nodeId, 'RUNNING', 150_000);
    expect(node.builds).toHaveLength(1);
    expect(node.builds[0]).toMatchObject({ action: 'create', buildStatus: 'SUCCESS' });
  }, 240_000);
});
