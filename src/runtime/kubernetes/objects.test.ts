import { describe, expect, it } from 'vitest';
import { readKubernetesConfig } from './settings.ts';
import { claimName, peerService, podName, restService, statefulSet, vssUrlSecret } from './objects.ts';

const config = readKubernetesConfig({ K8S_STORAGE_CLASS: 'fast', K8S_NODE_SELECTOR: 'pool=rln' }, []);
const nodeId = '0123456789abcdef0123456789abcdef';

describe('a node as Kubernetes objects', () => {
  const rootPublicKey = 'c3'.repeat(32);
  const set = statefulSet(config, { nodeId, network: 'testnet', imageVersion: 'abc123', replicas: 1, rootPublicKey });
  const pod = set.spec.template.spec;
  const container = pod.containers[0]!;

  it('is one replica on the node image, with RLN command line and fixed ports', () => {
    expect(set.metadata.name).toBe(`rln-${nodeId}`);
    expect(set.metadata.namespace).toBe('rln-nodes');
    expect(set.spec.replicas).toBe(1);
    expect(container.image).toBe('localhost/devnode:abc123');
    expect(container.args).toEqual(['/data/storage', '--daemon-listening-port', '3001', '--ldk-peer-listening-port', '9735', '--network', 'testnet', '--root-public-key', rootPublicKey]);
    // Continuous state: the node's own VSS URL at the service's in-cluster address, plain http allowed there.
    const vssUrl = 'http://rln-cloud.rln-cloud.svc:8080/vss/n/c';
    const withVss = statefulSet(config, { nodeId, network: 'testnet', imageVersion: 'abc123', replicas: 1, rootPublicKey, vssUrl }).spec.template.spec.containers[0]!;
    // The URL itself (its credential) is in the node's Secret, expanded by the kubelet: not in the spec.
    expect(withVss.args.slice(9)).toEqual(['--vss-url', '$(RLN_VSS_URL)', '--vss-allow-http']);
    expect(withVss.env).toEqual([{ name: 'RLN_VSS_URL', valueFrom: { secretKeyRef: { name: `rln-${nodeId}-vss`, key: 'url' } } }]);
    expect(JSON.stringify(statefulSet(config, { nodeId, network: 'testnet', imageVersion: 'abc123', replicas: 1, rootPublicKey, vssUrl }))).not.toContain('/vss/n/c');
    const secret = vssUrlSecret(config, nodeId, vssUrl);
    expect(secret.metadata).toMatchObject({ name: `rln-${nodeId}-vss`, namespace: 'rln-nodes', labels: { 'rln-cloud/node-id': nodeId } });
    expect(Buffer.from(secret.data.url, 'base64').toString()).toBe(vssUrl);
    expect(container.env).toBeUndefined();
    expect(container.ports.every((p) => p.protocol === 'TCP')).toBe(true);
    expect(container.readinessProbe).toMatchObject({ tcpSocket: { port: 3001 } });
  });

  it('runs a node created before root keys existed without authentication', () => {
    const older = statefulSet(config, { nodeId, network: 'testnet', imageVersion: 'abc123', replicas: 1, rootPublicKey: null });
    expect(older.spec.template.spec.containers[0]!.args.slice(-1)).toEqual(['--disable-authentication']);
  });

  it('carries the app.kubernetes.io labels and the node id; selects on the node id only', () => {
    expect(set.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'rgb-lightning-node',
      'app.kubernetes.io/managed-by': 'rln-cloud',
      'app.kubernetes.io/instance': `rln-${nodeId}`,
      'rln-cloud/node-id': nodeId,
    });
    expect(set.spec.selector).toEqual({ matchLabels: { 'rln-cloud/node-id': nodeId } });
    expect(set.spec.template.metadata.annotations).toEqual({ 'rln-cloud/image-version': 'abc123' });
  });

  it('gives the daemon nothing it does not need', () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.resources).toEqual({ requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
    expect(pod.nodeSelector).toEqual({ pool: 'rln' });
    expect(JSON.stringify(set)).not.toMatch(/secret/i);
  });

  it('keeps storage on a claim of the configured class and size', () => {
    expect(set.spec.volumeClaimTemplates[0]!.spec).toEqual({ accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } });
    expect(claimName(nodeId)).toBe(`data-${podName(nodeId)}`);
    expect(statefulSet(readKubernetesConfig({}, []), { nodeId, network: 'regtest', imageVersion: 'v', replicas: 0 }).spec.volumeClaimTemplates[0]!.spec).not.toHaveProperty('storageClassName');
  });

  it('exposes the REST port in the cluster and the peer port outside, keeping an assigned node port', () => {
    expect(restService(config, nodeId).spec).toEqual({ type: 'ClusterIP', selector: { 'rln-cloud/node-id': nodeId }, ports: [{ name: 'rest', port: 3001, targetPort: 3001, protocol: 'TCP' }] });
    expect(peerService(config, nodeId).spec.ports[0]).not.toHaveProperty('nodePort');
    expect(peerService(config, nodeId, 31234).spec).toMatchObject({ type: 'NodePort', ports: [{ port: 9735, nodePort: 31234, protocol: 'TCP' }] });
    const lb = readKubernetesConfig({ K8S_PEER_SERVICE_TYPE: 'LoadBalancer' }, []);
    expect(peerService(lb, nodeId, 31234).spec).toMatchObject({ type: 'LoadBalancer', ports: [{ port: 9735 }] });
    expect(peerService(lb, nodeId, 31234).spec.ports[0]).not.toHaveProperty('nodePort');
  });

  it('binds the peer port on the machine with HostPort, and only then', () => {
    const hostPorts = readKubernetesConfig({ K8S_PEER_SERVICE_TYPE: 'HostPort' }, []);
    const peerOf = (c: typeof config, hostPort?: number) =>
      statefulSet(c, { nodeId, network: 'regtest', imageVersion: 'v', replicas: 1, hostPort }).spec.template.spec.containers[0]!.ports.find((p) => p.name === 'peer');
    expect(peerOf(hostPorts, 20007)).toEqual({ name: 'peer', containerPort: 9735, protocol: 'TCP', hostPort: 20007 });
    expect(peerOf(config, 31234)).not.toHaveProperty('hostPort');
    expect(hostPorts.peerPortRange).toEqual({ from: 20000, to: 29999 });
  });
});
