// The API server restarted in the middle of a build: the management API keeps answering, the
// build's calls are retried and the watches resume, and the build finishes. It restarts the test
// cluster's API server for everyone, so vitest runs this file alone, after all others
// (vitest.config.ts).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { repoRoot } from '../helpers/service-process.ts';
import { deleteNamespace, describeOnCluster, kubectlGet, testKubeconfig, testNamespace, until, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

describeOnCluster('kubernetes runtime: the API server restarted mid-build (test cluster)', () => {
  const namespace = testNamespace('apiserver');
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ RUNTIME: 'kubernetes', KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '16Mi', NODE_START_TIMEOUT_MS: '90000', ...SMALL_NODE_PODS });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await deleteNamespace(namespace);
  });

  it('finishes the build and keeps answering the API while the API server is away', async () => {
    const user = await t.createUser();
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
