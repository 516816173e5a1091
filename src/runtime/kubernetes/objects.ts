// The Kubernetes objects of one node, as plain data: a StatefulSet of one replica whose volume claim
// holds the node's storage, a ClusterIP Service for the REST port (what the gateways reach) and a
// Service exposing the Lightning peer port. Pure functions, so the exact spec is unit-tested and the
// runtime only applies what these return.
import { vssDaemonArgs } from '../vss-args.ts';
import { authenticationArgs } from '../command.ts';
import type { Network } from '../../domain/nodes.ts';
import type { KubernetesConfig } from './settings.ts';

/** The daemon listens on fixed ports: every pod has its own address. */
export const REST_PORT = 3001;
export const PEER_PORT = 9735;
/** The volume is mounted here; the daemon's storage directory is a folder inside it. */
export const DATA_MOUNT = '/data';
export const STORAGE_DIR = `${DATA_MOUNT}/storage`;
export const CONTAINER = 'rln';
/** Server-side apply's field manager: the one owner of every field the service sets. */
export const FIELD_MANAGER = 'rln-cloud';

export const NODE_ID_LABEL = 'rln-cloud/node-id';
export const IMAGE_VERSION_ANNOTATION = 'rln-cloud/image-version';
export const MANAGED_SELECTOR = 'app.kubernetes.io/managed-by=rln-cloud';

export const workloadName = (nodeId: string) => `rln-${nodeId}`;
/** The Secret holding the node's VSS URL (its credential): read by the kubelet, never in the StatefulSet. */
export const vssSecretName = (nodeId: string) => `rln-${nodeId}-vss`;
/** The container's variable the kubelet fills from that Secret and expands in `--vss-url $(...)`. */
export const VSS_URL_ENV = 'RLN_VSS_URL';
const VSS_URL_KEY = 'url';
export const peerServiceName = (nodeId: string) => `rln-${nodeId}-peer`;
export const podName = (nodeId: string) => `${workloadName(nodeId)}-0`;
export const claimName = (nodeId: string) => `data-${podName(nodeId)}`;

export interface NodeObjectsInput {
  nodeId: string;
  network: Network;
  imageVersion: string;
  replicas: 0 | 1;
  /** The peer Service's node port once the cluster assigned one: kept when the Service is recreated. */
  peerNodePort?: number | null;
  /** K8S_PEER_SERVICE_TYPE=HostPort: the node's port of K8S_PEER_PORT_RANGE, bound on its machine. */
  hostPort?: number | null;
  /** The node's VSS URL when it has continuous state: the daemon gets `--vss-url` (and `--vss-allow-http`). */
  vssUrl?: string;
  /** The node's Biscuit root public key (hex); null or absent: started without authentication (a node from before keys). */
  rootPublicKey?: string | null;
}

export function nodeLabels(nodeId: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'rgb-lightning-node',
    'app.kubernetes.io/instance': workloadName(nodeId),
    'app.kubernetes.io/component': 'node',
    'app.kubernetes.io/part-of': 'rln-cloud',
    'app.kubernetes.io/managed-by': 'rln-cloud',
    [NODE_ID_LABEL]: nodeId,
  };
}

export const imageFor = (config: KubernetesConfig, version: string) => config.imageTemplate.replaceAll('{version}', version);

/**
 * rgb-lightning-node's command line; the image's entrypoint is the daemon itself. The VSS URL is
 * passed as `$(RLN_VSS_URL)`: Kubernetes expands a container's variables in its args, so the daemon
 * (RLN's fork and devnode alike read `--vss-url` from their command line) gets the URL while the
 * StatefulSet, readable by whoever may read workloads in the namespace, names only the Secret.
 */
export function daemonArgs(network: Network, rootPublicKey: string | null, vssUrl?: string): string[] {
  return [
    STORAGE_DIR,
    '--daemon-listening-port', String(REST_PORT),
    '--ldk-peer-listening-port', String(PEER_PORT),
    '--network', network,
    // Tokens of the node's root key only (issue #40): the service's own calls and the gateways send them.
    ...authenticationArgs(rootPublicKey),
    ...vssDaemonArgs(vssUrl, `$(${VSS_URL_ENV})`),
  ];
}

/** The node's VSS URL as a Secret of the nodes' namespace, applied before the StatefulSet that refers to it. */
export function vssUrlSecret(config: KubernetesConfig, nodeId: string, vssUrl: string) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: vssSecretName(nodeId), namespace: config.namespace, labels: nodeLabels(nodeId) },
    type: 'Opaque',
    // data, not stringData: server-side apply then compares like with like, and re-applying the same URL changes nothing.
    data: { [VSS_URL_KEY]: Buffer.from(vssUrl, 'utf8').toString('base64') },
  };
}

export function statefulSet(config: KubernetesConfig, input: NodeObjectsInput) {
  const labels = nodeLabels(input.nodeId);
  const annotations = { [IMAGE_VERSION_ANNOTATION]: input.imageVersion };
  const { resources: r } = config;
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: workloadName(input.nodeId), namespace: config.namespace, labels, annotations },
    spec: {
      replicas: input.replicas,
      serviceName: workloadName(input.nodeId),
      selector: { matchLabels: { [NODE_ID_LABEL]: input.nodeId } },
      // The runtime replaces the pod itself when the image changes: a rolling update waits forever
      // on a pod that never became ready, which would make rolling back impossible.
      updateStrategy: { type: 'OnDelete' },
      template: {
        metadata: { labels, annotations },
        spec: {
          // The daemon needs nothing from the cluster: no API token, no service links.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: config.runAsUser,
            runAsGroup: config.runAsUser,
            fsGroup: config.runAsUser,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(config.imagePullSecrets.length > 0 ? { imagePullSecrets: config.imagePullSecrets.map((name) => ({ name })) } : {}),
          ...(Object.keys(config.nodeSelector).length > 0 ? { nodeSelector: config.nodeSelector } : {}),
          ...(config.tolerations.length > 0 ? { tolerations: config.tolerations } : {}),
          containers: [
            {
              name: CONTAINER,
              image: imageFor(config, input.imageVersion),
              imagePullPolicy: config.imagePullPolicy,
              args: daemonArgs(input.network, input.rootPublicKey ?? null, input.vssUrl),
              ...(input.vssUrl === undefined ?
                {}
              : { env: [{ name: VSS_URL_ENV, valueFrom: { secretKeyRef: { name: vssSecretName(input.nodeId), key: VSS_URL_KEY } } }] }),
              ports: [
                { name: 'rest', containerPort: REST_PORT, protocol: 'TCP' },
                { name: 'peer', containerPort: PEER_PORT, protocol: 'TCP', ...(config.peerServiceType === 'HostPort' && input.hostPort ? { hostPort: input.hostPort } : {}) },
              ],
              // A locked RLN answers 403 on most routes until unlocked: an open port is what ready means.
              readinessProbe: { tcpSocket: { port: REST_PORT }, periodSeconds: 2, failureThreshold: 3 },
              resources: {
                requests: { cpu: r.cpuRequest, memory: r.memoryRequest },
                limits: { cpu: r.cpuLimit, memory: r.memoryLimit },
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: config.readOnlyRootFilesystem,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'data', mountPath: DATA_MOUNT },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data', labels },
          spec: {
            accessModes: ['ReadWriteOnce'],
            ...(config.storageClass ? { storageClassName: config.storageClass } : {}),
            resources: { requests: { storage: config.storageSize } },
          },
        },
      ],
    },
  };
}

export function restService(config: KubernetesConfig, nodeId: string) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: workloadName(nodeId), namespace: config.namespace, labels: nodeLabels(nodeId) },
    spec: {
      type: 'ClusterIP',
      selector: { [NODE_ID_LABEL]: nodeId },
      // v1.20's server-side apply refuses a port without its protocol.
      ports: [{ name: 'rest', port: REST_PORT, targetPort: REST_PORT, protocol: 'TCP' }],
    },
  };
}

export function peerService(config: KubernetesConfig, nodeId: string, nodePort?: number | null) {
  const keepPort = config.peerServiceType === 'NodePort' && nodePort ? { nodePort } : {};
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: peerServiceName(nodeId), namespace: config.namespace, labels: nodeLabels(nodeId) },
    spec: {
      type: config.peerServiceType,
      selector: { [NODE_ID_LABEL]: nodeId },
      ports: [{ name: 'peer', port: PEER_PORT, targetPort: PEER_PORT, protocol: 'TCP', ...keepPort }],
    },
  };
}
