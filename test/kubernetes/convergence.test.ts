// Convergence on RUNTIME=kubernetes: the real service (npm start) killed with SIGKILL in the middle
// of a create build is started again and the build finishes (server-side apply is idempotent, so
// applying again is harmless). The API server's restart is in apiserver-restart.test.ts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { callService, serviceEnv, startServiceProcess, waitForServiceNode, type ServiceProcess } from '../helpers/service-process.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

describeOnCluster('kubernetes runtime: the service killed mid-build (test cluster)', () => {
  const namespace = testNamespace('crash');
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-k8s-crash-'));
  let svc: ServiceProcess;
  let token: string;

  beforeAll(async () => {
    const env = await serviceEnv(dataDir, { RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '16Mi', RECONCILE_INTERVAL_MS: '1000', ...SMALL_NODE_PODS });
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

