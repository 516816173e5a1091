// A node with continuous state on RUNTIME=kubernetes (issue #43), on the project's test cluster: its
// VSS URL, whose credential lets whoever holds it bind a key to the node's store, is in a Secret of
// its own, not in the StatefulSet's spec (readable by whoever may read workloads in the namespace).
// The daemon still gets it on its command line: the kubelet expands `--vss-url $(RLN_VSS_URL)` from
// the Secret. Destroying the node deletes the Secret. The URL here names the in-cluster service
// address; the daemon is not unlocked, so nothing is written there.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { readKubernetesConfig } from '../../src/runtime/kubernetes/settings.ts';
import { KubernetesRuntime } from '../../src/runtime/kubernetes/runtime.ts';
import type { NodeSpec } from '../../src/runtime/types.ts';
import { deleteNamespace, describeOnCluster, kubectl, kubectlGet, testKubeconfig, testNamespace, SMALL_NODE_PODS } from '../helpers/kubernetes.ts';

describeOnCluster("a node's VSS URL on the kubernetes runtime (test cluster)", () => {
  const namespace = testNamespace('vss-url');
  const spec: NodeSpec = { nodeId: randomBytes(16).toString('hex'), network: 'regtest', imageVersion: 'devnode-0.1.0', restPort: null, peerPort: null, continuousState: true };
  const nodeId = spec.nodeId;
  const credential = randomBytes(24).toString('base64url');
  const vssUrl = `http://rln-cloud-api.rln-cloud.svc:8080/vss/${nodeId}/${credential}`;
  const fencesReleased: string[] = [];
  let runtime: KubernetesRuntime;

  const get = (kind: string, name: string) => kubectlGet(namespace, kind, name);

  beforeAll(async () => {
    const problems: string[] = [];
    const config = readKubernetesConfig({ KUBECONFIG: testKubeconfig!, K8S_NAMESPACE: namespace, K8S_STORAGE_SIZE: '256Mi', ...SMALL_NODE_PODS }, problems);
    expect(problems).toEqual([]);
    runtime = await KubernetesRuntime.start({
      config,
      takenPorts: async () => new Set<number>(),
      defaultPeerHost: '127.0.0.1',
      log: createLogger('warn'),
      vssUrls: { urlFor: async () => vssUrl, releaseFence: async (id) => void fencesReleased.push(id) },
    });
    await runtime.start(spec);
    await runtime.awaitRunning(spec, 120_000);
  }, 180_000);
  afterAll(async () => {
    await runtime?.destroy(nodeId).catch(() => {});
    await runtime?.shutdown();
    await deleteNamespace(namespace);
  }, 180_000);

  it('keeps the URL in the Secret, names only the Secret in the StatefulSet, and the daemon gets the URL', async () => {
    const secret = await get('secret', `rln-${nodeId}-vss`);
    expect(Buffer.from(secret.data.url, 'base64').toString()).toBe(vssUrl);
    expect(secret.metadata.labels['rln-cloud/node-id']).toBe(nodeId);
    const set = await get('statefulset', `rln-${nodeId}`);
    expect(JSON.stringify(set)).not.toContain(credential);
    const container = set.spec.template.spec.containers[0];
    expect(container.args.slice(-3)).toEqual(['--vss-url', '$(RLN_VSS_URL)', '--vss-allow-http']);
    expect(container.env).toEqual([{ name: 'RLN_VSS_URL', valueFrom: { secretKeyRef: { name: `rln-${nodeId}-vss`, key: 'url' } } }]);
    // What the daemon runs with, read in its container: the URL, expanded by the kubelet.
    const cmdline = await kubectl(['-n', namespace, 'exec', `rln-${nodeId}-0`, '-c', 'rln', '--', 'node', '-e', "process.stdout.write(require('fs').readFileSync('/proc/1/cmdline', 'utf8'))"]);
    const args = cmdline.split('\0');
    expect(args[args.indexOf('--vss-url') + 1]).toBe(vssUrl);
    // The node had no pod: its fence was released before the start (runtime.ts).
    expect(fencesReleased).toEqual([nodeId]);
  });

  it('deletes the Secret with the node', async () => {
    await runtime.destroy(nodeId);
    expect(await get('secret', `rln-${nodeId}-vss`)).toBeUndefined();
    expect(await get('statefulset', `rln-${nodeId}`)).toBeUndefined();
  }, 120_000);
});
