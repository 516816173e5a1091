// Settings of the `kubernetes` runtime (RUNTIME=kubernetes): where nodes run, what they run and
// with which resources. Read once at start with the rest of the configuration; every value is
// checked there, so a typo stops the start instead of failing the first build.

export type PeerServiceType = 'NodePort' | 'LoadBalancer';

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

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
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
  /** The user the daemon runs as: never root. */
  runAsUser: number;
  /** Off only for images that must write outside their volume. */
  readOnlyRootFilesystem: boolean;
}

type Env = Record<string, string | undefined>;

const CPU = /^\d+(\.\d+)?m?$/;
const MEMORY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9.-]{1,253}\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

export function readKubernetesConfig(env: Env, problems: string[]): KubernetesConfig {
  const str = (name: string, fallback: string) => (env[name] === undefined || env[name] === '' ? fallback : env[name]!.trim());
  const quantity = (name: string, fallback: string, pattern: RegExp, what: string) => {
    const value = str(name, fallback);
    if (!pattern.test(value)) problems.push(`${name} must be a Kubernetes ${what} quantity (e.g. ${fallback}), got "${value}"`);
    return value;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const value = str(name, fallback) as T;
    if (!allowed.includes(value)) problems.push(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
    return value;
  };

  const namespace = str('K8S_NAMESPACE', 'rln-nodes');
  if (!DNS_LABEL.test(namespace)) problems.push(`K8S_NAMESPACE must be a DNS label (lowercase letters, digits, "-"), got "${namespace}"`);
  const imageTemplate = str('K8S_IMAGE', 'localhost/devnode:{version}');
  if (!imageTemplate.includes('{version}')) problems.push(`K8S_IMAGE must contain {version} (each node runs its own image version), got "${imageTemplate}"`);
  const storageClass = env.K8S_STORAGE_CLASS?.trim() || undefined;
  if (storageClass && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(storageClass)) problems.push(`K8S_STORAGE_CLASS is not a valid name: "${storageClass}"`);
  const runAsUser = Number(str('K8S_RUN_AS_USER', '1000'));
  if (!Number.isInteger(runAsUser) || runAsUser < 1) problems.push('K8S_RUN_AS_USER must be a user id above 0 (nodes never run as root)');
  const readOnly = str('K8S_READ_ONLY_ROOT_FILESYSTEM', 'true');
  if (readOnly !== 'true' && readOnly !== 'false') problems.push(`K8S_READ_ONLY_ROOT_FILESYSTEM must be true or false, got "${readOnly}"`);

  return {
    kubeconfig: env.KUBECONFIG?.trim() || undefined,
    namespace,
    imageTemplate,
    imagePullPolicy: oneOf('K8S_IMAGE_PULL_POLICY', 'IfNotPresent', ['Always', 'IfNotPresent', 'Never'] as const),
    imagePullSecrets: list(str('K8S_IMAGE_PULL_SECRETS', '')).filter((name) => {
      if (DNS_LABEL.test(name)) return true;
      problems.push(`K8S_IMAGE_PULL_SECRETS: "${name}" is not a secret name`);
      return false;
    }),
    resources: {
      cpuRequest: quantity('K8S_CPU_REQUEST', '500m', CPU, 'CPU'),
      cpuLimit: quantity('K8S_CPU_LIMIT', '500m', CPU, 'CPU'),
      memoryRequest: quantity('K8S_MEMORY_REQUEST', '512Mi', MEMORY, 'memory'),
      memoryLimit: quantity('K8S_MEMORY_LIMIT', '512Mi', MEMORY, 'memory'),
    },
    storageClass,
    storageSize: quantity('K8S_STORAGE_SIZE', '10Gi', MEMORY, 'storage'),
    peerServiceType: oneOf('K8S_PEER_SERVICE_TYPE', 'NodePort', ['NodePort', 'LoadBalancer'] as const),
    peerHost: env.K8S_PEER_HOST?.trim() || undefined,
    nodeSelector: parseNodeSelector(str('K8S_NODE_SELECTOR', ''), problems),
    tolerations: parseTolerations(str('K8S_TOLERATIONS', '[]'), problems),
    runAsUser,
    readOnlyRootFilesystem: readOnly !== 'false',
  };
}

const list = (raw: string) => raw.split(',').map((s) => s.trim()).filter(Boolean);

/** `key=value,key2=value2`, as kubectl's --selector writes it. */
function parseNodeSelector(raw: string, problems: string[]): Record<string, string> {
  const selector: Record<string, string> = {};
  for (const pair of list(raw)) {
    const [key = '', value = '', ...rest] = pair.split('=');
    if (!pair.includes('=') || rest.length > 0 || !LABEL_KEY.test(key) || !LABEL_VALUE.test(value)) {
      problems.push(`K8S_NODE_SELECTOR must be key=value pairs separated by commas, got "${pair}"`);
      continue;
    }
    selector[key] = value;
  }
  return selector;
}

/** A JSON array of tolerations, exactly as in a pod spec. */
function parseTolerations(raw: string, problems: string[]): Toleration[] {
  const fields = new Set(['key', 'operator', 'value', 'effect', 'tolerationSeconds']);
  try {
    const parsed: unknown = JSON.parse(raw);
    const valid =
      Array.isArray(parsed) &&
      parsed.every((t) => typeof t === 'object' && t !== null && !Array.isArray(t) && Object.keys(t).every((k) => fields.has(k)));
    if (valid) return parsed as Toleration[];
  } catch {
    // reported below
  }
  problems.push('K8S_TOLERATIONS must be a JSON array of tolerations ({key, operator, value, effect, tolerationSeconds})');
  return [];
}
