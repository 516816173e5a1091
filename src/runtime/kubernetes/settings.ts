// Settings of the `kubernetes` runtime (RUNTIME=kubernetes): where nodes run, what they run and
// with which resources. Read once at start with the rest of the configuration; every value is
// checked there, so a typo stops the start instead of failing the first build.
import { Type, type Static } from '@sinclair/typebox';
import { boolean, commaList, format, integer, json, matching, oneOf, text } from '../../env/formats.ts';
import { readEnv, variable, type Env } from '../../env/variable.ts';

export type PeerServiceType = 'NodePort' | 'LoadBalancer' | 'HostPort';

/** A toleration exactly as in a pod spec; unknown fields are refused (a typo would be ignored by Kubernetes). */
const TolerationSchema = Type.Object(
  {
    key: Type.Optional(Type.String()),
    operator: Type.Optional(Type.Union([Type.Literal('Exists'), Type.Literal('Equal')])),
    value: Type.Optional(Type.String()),
    effect: Type.Optional(Type.Union([Type.Literal('NoSchedule'), Type.Literal('PreferNoSchedule'), Type.Literal('NoExecute')])),
    tolerationSeconds: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);
export type Toleration = Static<typeof TolerationSchema>;

export interface KubernetesConfig {
  /** A kubeconfig file; unset: the service account of the pod the service runs in. */
  kubeconfig: string | undefined;
  /** The namespace every node's objects live in. */
  namespace: string;
  /** The node image; `{version}` is replaced by the node's image version (an RLN commit id). */
  imageTemplate: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  imagePullSecrets: string[];
  resources: { cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string };
  /** Unset: the cluster's default StorageClass. */
  storageClass: string | undefined;
  storageSize: string;
  /** How the Lightning peer port is exposed, and the address peers are told. */
  peerServiceType: PeerServiceType;
  /** The address of the cluster's nodes (NodePort) or a fixed address in front of load balancers. */
  peerHost: string | undefined;
  /** HostPort: the ports handed to nodes, one each, unique in the cluster. */
  peerPortRange: { from: number; to: number };
  /** NodePort: the cluster's NodePort range, which the peer Services' ports come from (a metric's only). */
  nodePortRange: { from: number; to: number };
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
  /** The user the daemon runs as: never root. */
  runAsUser: number;
  /** Off only for images that must write outside their volume. */
  readOnlyRootFilesystem: boolean;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9.-]{1,253}\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

const cpu = matching(/^\d+(\.\d+)?m?$/, 'be a Kubernetes CPU quantity (e.g. 500m)');
const bytes = (what: string, example: string) => matching(/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/, `be a Kubernetes ${what} quantity (e.g. ${example})`);

/** `key=value,key2=value2`, as kubectl's --selector writes it. */
const nodeSelector = format(
  Type.Record(Type.String({ pattern: LABEL_KEY.source }), Type.String({ pattern: LABEL_VALUE.source })),
  'be key=value pairs separated by commas',
  (t) => {
    const pairs = t.split(',').map((p) => p.trim()).filter(Boolean).map((p) => p.split('='));
    return pairs.every((p) => p.length === 2) ? Object.fromEntries(pairs) as Record<string, string> : undefined;
  },
);

const peerPortRange = format(
  Type.Object({ from: Type.Integer({ minimum: 1024, maximum: 65535 }), to: Type.Integer({ minimum: 1024, maximum: 65535 }) }),
  'be "<from>-<to>" within 1024-65535',
  (t) => {
    const m = /^(\d+)-(\d+)$/.exec(t);
    return m && Number(m[2]) >= Number(m[1]) ? { from: Number(m[1]), to: Number(m[2]) } : undefined;
  },
);

// The defaults are the original (pre-cloud) service's: 0.5 CPU and 512 MiB per node, requests
// equal to limits so a node is never throttled or evicted for using what it was promised.
export const KUBERNETES_VARIABLES = {
  kubeconfig: variable('KUBECONFIG', text(), {
    unset: 'unset: in-cluster service account',
    doc: 'kubeconfig file of the cluster the nodes run on',
  }),
  namespace: variable('K8S_NAMESPACE', matching(DNS_LABEL, 'be a DNS label (lowercase letters, digits, "-")'), {
    default: 'rln-nodes',
    doc: "namespace of every node's objects",
  }),
  imageTemplate: variable('K8S_IMAGE', matching(/\{version\}/, 'contain {version} (each node runs its own image version)'), {
    default: 'localhost/devnode:{version}',
    doc: "node image; `{version}` is the node's image version (an RLN commit id: upstream images are tagged by commit)",
  }),
  imagePullPolicy: variable('K8S_IMAGE_PULL_POLICY', oneOf(['Always', 'IfNotPresent', 'Never']), {
    default: 'IfNotPresent',
    doc: '`Always`, `IfNotPresent` or `Never`',
  }),
  imagePullSecrets: variable('K8S_IMAGE_PULL_SECRETS', commaList(DNS_LABEL, 'be secret names separated by commas'), {
    default: '',
    doc: 'comma-separated names of pull secrets in the namespace',
  }),
  cpuRequest: variable('K8S_CPU_REQUEST', cpu, { default: '500m', doc: 'CPU requested per node (a Kubernetes quantity)' }),
  cpuLimit: variable('K8S_CPU_LIMIT', cpu, { default: '500m', doc: 'CPU limit per node' }),
  memoryRequest: variable('K8S_MEMORY_REQUEST', bytes('memory', '512Mi'), { default: '512Mi', doc: 'memory requested per node' }),
  memoryLimit: variable('K8S_MEMORY_LIMIT', bytes('memory', '512Mi'), { default: '512Mi', doc: 'memory limit per node' }),
  storageClass: variable('K8S_STORAGE_CLASS', matching(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'be a StorageClass name'), {
    unset: "unset: the cluster's default",
    doc: "StorageClass of each node's volume",
  }),
  storageSize: variable('K8S_STORAGE_SIZE', bytes('storage', '10Gi'), { default: '10Gi', doc: "size of each node's volume" }),
  peerServiceType: variable('K8S_PEER_SERVICE_TYPE', oneOf(['NodePort', 'LoadBalancer', 'HostPort']), {
    default: 'NodePort',
    doc: 'how the Lightning peer port is exposed: `NodePort` (a Service each, from the cluster\'s NodePort range: ~2,700 nodes by default), `LoadBalancer` (one load balancer each) or `HostPort` (a port of `K8S_PEER_PORT_RANGE` on the machine the pod runs on, no Service: as many nodes as the range has ports); see [Peer ports for a fleet](DEPLOY.md#6-peer-ports-for-a-fleet)',
  }),
  // Above the default NodePort range (30000-32767) and below Linux's ephemeral ports (32768+ is
  // the kernel's; 20000-29999 collides with neither), 10,000 ports: 10,000 nodes per cluster.
  peerPortRange: variable('K8S_PEER_PORT_RANGE', peerPortRange, {
    default: '20000-29999',
    doc: "`HostPort` only: the ports handed to nodes, one per node, unique across the cluster; open them in the machines' firewall",
  }),
  // Only what the peer-port metric divides by: the cluster allocates the ports itself.
  nodePortRange: variable('K8S_NODE_PORT_RANGE', peerPortRange, {
    default: '30000-32767',
    doc: "`NodePort` only: the cluster's NodePort range (the API server's `--service-node-port-range`), which `rlncloud_node_ports` measures the nodes' peer Services against; other NodePort Services share it",
  }),
  peerHost: variable('K8S_PEER_HOST', text(), {
    unset: "unset: the host of `PUBLIC_URL` (NodePort) or the load balancer's address",
    doc: 'the `peerDNS` users are given',
  }),
  nodeSelector: variable('K8S_NODE_SELECTOR', nodeSelector, { default: '', doc: '`key=value,...` for the node pods' }),
  tolerations: variable('K8S_TOLERATIONS', json<Toleration[]>(Type.Array(TolerationSchema), 'be a JSON array of tolerations ({key, operator, value, effect, tolerationSeconds})'), {
    default: '[]',
    doc: 'a JSON array of tolerations for the node pods',
  }),
  // Never root: a compromised daemon should not own its pod's file system or the node's mounts.
  runAsUser: variable('K8S_RUN_AS_USER', integer(1, undefined, 'be a user id above 0 (nodes never run as root)'), {
    default: '1000',
    doc: 'the user id the daemon runs as (not 0)',
  }),
  readOnlyRootFilesystem: variable('K8S_READ_ONLY_ROOT_FILESYSTEM', boolean(), {
    default: 'true',
    doc: '`false` only for an image that must write outside `/data` and `/tmp`',
  }),
};

export function readKubernetesConfig(env: Env, problems: string[]): KubernetesConfig {
  const { cpuRequest, cpuLimit, memoryRequest, memoryLimit, ...values } = readEnv(KUBERNETES_VARIABLES, env, problems);
  return { ...values, resources: { cpuRequest, cpuLimit, memoryRequest, memoryLimit } };
}
