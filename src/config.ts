// The service's configuration: read from the environment once, validated, and passed in.
// No other module reads process.env; tests build the Config they need with `loadConfig(env)`.
import { resolve } from 'node:path';
import { readLogsConfig, type LogsConfig } from './logs/config.ts';
import { readBlobStoreConfig, type BlobStoreConfig } from './blobs/config.ts';
import { readWebhookConfig, type WebhookConfig } from './webhooks/config.ts';
import { readKubernetesConfig, type KubernetesConfig } from './runtime/kubernetes/config.ts';

export type RuntimeKind = 'process' | 'kubernetes';

export interface Config {
  /** Where PGlite data, node storage, logs, keys and the dev token live. */
  dataDir: string;
  /** Interface the three listeners bind; loopback by default so a laptop exposes nothing. */
  host: string;
  apiPort: number;
  nodeApiPort: number;
  mtlsPort: number;
  /** Public base URLs: what clients are told, which may differ from the listeners (proxies). */
  publicUrl: string;
  nodeApiUrl: string;
  userNodeUrl: string;
  connectPageUrl: string;
  /** Unset: embedded PGlite in DATA_DIR/pglite. */
  databaseUrl: string | undefined;
  /** What runs the nodes: child processes on this machine, or pods on a Kubernetes cluster. */
  runtime: RuntimeKind;
  /** Set with RUNTIME=kubernetes (K8S_* variables; see runtime/kubernetes/config.ts). */
  kubernetes: KubernetesConfig | undefined;
  /**
   * Command that starts one node daemon. Unset: devnode from this repository. The template may
   * use {version}; the runtime appends RLN's own arguments (storage dir, ports, network, auth).
   */
  rlnCommand: string | undefined;
  /** Ports handed to node daemons (REST and Lightning peer), allocated in pairs. */
  nodePortRange: { from: number; to: number };
  /** Image version seeded into the release catalog on first start. */
  initialImageVersion: string;
  /** How long a node daemon may take to answer after a start before the build fails. */
  nodeStartTimeoutMs: number;
  /** How many jobs (builds, log exports) one process carries out at once. */
  jobConcurrency: number;
  /** How often workers look for due jobs when nothing woke them (they are also woken in-process). */
  jobPollIntervalMs: number;
  /** How often the reconcile loop compares desired and actual node state. */
  reconcileIntervalMs: number;
  /** Release rollouts: how many nodes upgrade at once, and how many failures pause a rollout. */
  rolloutConcurrency: number;
  rolloutFailureBudget: number;
  /** How long a DESTROYED node stays readable before its record is deleted. */
  destroyedRetentionHours: number;
  /** The node access gateways (bearer and mutual TLS), their CA and what unlock adds; see gateway/. */
  nodeAccess: NodeAccessConfig;
  /** Create a development user and token on the first start with an empty database. */
  bootstrapDevUser: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  production: boolean;
  /** Daemon log rotation and log exports (LOG_* variables; see logs/config.ts). */
  logs: LogsConfig;
  /** Where log export archives are stored (BLOB_STORE, S3_*; see blobs/config.ts). */
  blobStore: BlobStoreConfig;
  /** Webhook targets, retries, timeout and signing keys (WEBHOOK_*; see webhooks/config.ts). */
  webhooks: WebhookConfig;
}

/** What the gateway adds to a user's unlock for one network: chain sync, indexer and RGB proxy. */
export interface ChainSettings {
  /** `bitcoind`: RLN syncs blocks from bitcoind (BlockSync); `indexer`: from the indexer (TransactionSync). */
  chainSync: 'bitcoind' | 'indexer';
  bitcoindRpcHost: string;
  bitcoindRpcPort: number;
  bitcoindRpcUsername: string;
  /** A secret: never logged, never shown to users (the gateway only sends it to the node). */
  bitcoindRpcPassword: string;
  indexerUrl: string;
  proxyEndpoint: string;
}

export interface NodeAccessConfig {
  /** How long the gateways wait on a silent node before answering 504. */
  nodeTimeoutMs: number;
  /** Largest request body forwarded to a node, and largest response body passed back. */
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** How long a client may take to send a request's headers and body (slow clients are cut off). */
  clientTimeoutMs: number;
  /** Unset: the CA is created in DATA_DIR/pki at first start. Both or neither. */
  caCertFile: string | undefined;
  caKeyFile: string | undefined;
  /** Unset: the mutual-TLS gateway's server certificate is issued by the CA at each start. */
  mtlsCertFile: string | undefined;
  mtlsKeyFile: string | undefined;
  /** Default (and longest) validity of a client certificate. */
  clientCertDays: number;
  chain: { regtest: ChainSettings; testnet: ChainSettings };
  /** The unlock body nodes take: RLN's current one (ldk_chain_sync) or the older flat one. */
  unlockBodyFormat: 'current' | 'flat';
  /** Image versions that take the flat body whatever unlockBodyFormat says (older RLN builds). */
  unlockFlatVersions: string[];
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => {
    const v = env[name];
    return v === undefined || v === '' ? fallback : v;
  };
  const port = (name: string, fallback: number) => {
    const raw = str(name, String(fallback));
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 1 || n > 65535) {
      problems.push(`${name} must be a TCP port between 1 and 65535, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const positiveInt = (name: string, fallback: number) => {
    const raw = str(name, String(fallback));
    if (!/^\d+$/.test(raw) || Number(raw) <= 0) {
      problems.push(`${name} must be a positive integer, got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };
  const nonNegativeInt = (name: string, fallback: number) => {
    const raw = str(name, String(fallback));
    if (!/^\d+$/.test(raw)) {
      problems.push(`${name} must be a whole number (0 or more), got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean) => {
    const raw = str(name, String(fallback)).toLowerCase();
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };
  const url = (name: string, fallback: string, schemes: string[]) => {
    const raw = str(name, fallback);
    try {
      const u = new URL(raw);
      if (!schemes.includes(u.protocol)) problems.push(`${name} must use ${schemes.join(' or ')}, got "${raw}"`);
    } catch {
      problems.push(`${name} must be an absolute URL, got "${raw}"`);
    }
    return raw.replace(/\/+$/, '');
  };

  const host = str('HOST', '127.0.0.1');
  const apiPort = port('API_PORT', 8080);
  const nodeApiPort = port('NODE_API_PORT', 8081);
  const mtlsPort = port('MTLS_PORT', 8443);
  // Public URLs default to what the listeners are reachable at from this machine.
  const reachableHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const publicUrl = url('PUBLIC_URL', `http://${reachableHost}:${apiPort}`, ['http:', 'https:']);
  const nodeApiUrl = url('NODE_API_URL', `http://${reachableHost}:${nodeApiPort}`, ['http:', 'https:']);
  const userNodeUrl = url('USER_NODE_URL', `https://${reachableHost}:${mtlsPort}`, ['https:']);
  const connectPageUrl = url('CONNECT_PAGE_URL', `${publicUrl}/nodes`, ['http:', 'https:']);

  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be a postgres:// or postgresql:// URL`);
  }
  const runtime = str('RUNTIME', 'process') as RuntimeKind;
  if (runtime !== 'process' && runtime !== 'kubernetes') problems.push(`RUNTIME must be "process" or "kubernetes", got "${runtime}"`);

  const rangeRaw = str('NODE_PORT_RANGE', '39000-39999');
  const range = /^(\d+)-(\d+)$/.exec(rangeRaw);
  const nodePortRange = range ? { from: Number(range[1]), to: Number(range[2]) } : { from: 0, to: 0 };
  if (!range || nodePortRange.from < 1024 || nodePortRange.to > 65535 || nodePortRange.to - nodePortRange.from < 1) {
    problems.push(`NODE_PORT_RANGE must be "<from>-<to>" within 1024-65535 with room for a pair, got "${rangeRaw}"`);
  }

  const logLevel = str('LOG_LEVEL', 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const initialImageVersion = str('INITIAL_IMAGE_VERSION', 'devnode-0.1.0');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(initialImageVersion)) {
    problems.push('INITIAL_IMAGE_VERSION must be 1-64 characters of letters, digits, ".", "_" or "-"');
  }

  const nodeAccess = parseNodeAccess(env, problems, { str, port, positiveInt });

  const production = str('NODE_ENV', 'development') === 'production';
  const config: Config = {
    dataDir: resolve(str('DATA_DIR', './data')),
    host,
    apiPort,
    nodeApiPort,
    mtlsPort,
    publicUrl,
    nodeApiUrl,
    userNodeUrl,
    connectPageUrl,
    databaseUrl,
    runtime: runtime === 'kubernetes' ? 'kubernetes' : 'process',
    kubernetes: runtime === 'kubernetes' ? readKubernetesConfig(env, problems) : undefined,
    rlnCommand: env.RLN_COMMAND || undefined,
    nodePortRange,
    initialImageVersion,
    nodeStartTimeoutMs: positiveInt('NODE_START_TIMEOUT_MS', 30_000),
    jobConcurrency: positiveInt('JOB_CONCURRENCY', 8),
    jobPollIntervalMs: positiveInt('JOB_POLL_INTERVAL_MS', 1_000),
    reconcileIntervalMs: positiveInt('RECONCILE_INTERVAL_MS', 5_000),
    rolloutConcurrency: positiveInt('ROLLOUT_CONCURRENCY', 5),
    rolloutFailureBudget: nonNegativeInt('ROLLOUT_FAILURE_BUDGET', 3),
    destroyedRetentionHours: positiveInt('DESTROYED_RETENTION_HOURS', 168),
    nodeAccess,
    bootstrapDevUser: bool('BOOTSTRAP_DEV_USER', !production),
    logLevel,
    production,
    logs: readLogsConfig(env, problems),
    blobStore: readBlobStoreConfig(env, problems),
    webhooks: readWebhookConfig(env, problems, { dataDir: resolve(str('DATA_DIR', './data')), production }),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

interface Parsers {
  str: (name: string, fallback: string) => string;
  port: (name: string, fallback: number) => number;
  positiveInt: (name: string, fallback: number) => number;
}

function parseNodeAccess(env: Env, problems: string[], { str, port, positiveInt }: Parsers): NodeAccessConfig {
  const filePair = (certName: string, keyName: string) => {
    const cert = env[certName] || undefined;
    const key = env[keyName] || undefined;
    if (!cert !== !key) problems.push(`${certName} and ${keyName} must be set together`);
    return [cert && resolve(cert), key && resolve(key)] as const;
  };
  // Defaults point at a local regtest stack (bitcoind, electrs, RGB proxy on their usual ports),
  // what a developer runs beside RLN; a real deployment sets every value for its networks.
  const chain = (prefix: string, rpcPort: number, indexerPort: number): ChainSettings => {
    const chainSync = str(`${prefix}_CHAIN_SYNC`, 'bitcoind');
    if (chainSync !== 'bitcoind' && chainSync !== 'indexer') problems.push(`${prefix}_CHAIN_SYNC must be bitcoind or indexer, got "${chainSync}"`);
    return {
      chainSync: chainSync === 'indexer' ? 'indexer' : 'bitcoind',
      bitcoindRpcHost: str(`${prefix}_BITCOIND_RPC_HOST`, '127.0.0.1'),
      bitcoindRpcPort: port(`${prefix}_BITCOIND_RPC_PORT`, rpcPort),
      bitcoindRpcUsername: str(`${prefix}_BITCOIND_RPC_USERNAME`, 'user'),
      bitcoindRpcPassword: str(`${prefix}_BITCOIND_RPC_PASSWORD`, 'password'),
      indexerUrl: str(`${prefix}_INDEXER_URL`, `tcp://127.0.0.1:${indexerPort}`),
      proxyEndpoint: str(`${prefix}_PROXY_ENDPOINT`, 'rpc://127.0.0.1:3000/json-rpc'),
    };
  };
  const [caCertFile, caKeyFile] = filePair('CA_CERT_FILE', 'CA_KEY_FILE');
  const [mtlsCertFile, mtlsKeyFile] = filePair('MTLS_CERT_FILE', 'MTLS_KEY_FILE');
  const unlockBodyFormat = str('UNLOCK_BODY_FORMAT', 'current');
  if (unlockBodyFormat !== 'current' && unlockBodyFormat !== 'flat') problems.push(`UNLOCK_BODY_FORMAT must be current or flat, got "${unlockBodyFormat}"`);
  const clientCertDays = positiveInt('CLIENT_CERT_DAYS', 30);
  if (clientCertDays > 825) problems.push('CLIENT_CERT_DAYS must be at most 825: client certificates are meant to be short-lived');
  return {
    nodeTimeoutMs: positiveInt('NODE_API_TIMEOUT_MS', 60_000),
    maxRequestBytes: positiveInt('GATEWAY_MAX_REQUEST_BYTES', 16 * 1024 * 1024),
    maxResponseBytes: positiveInt('GATEWAY_MAX_RESPONSE_BYTES', 64 * 1024 * 1024),
    clientTimeoutMs: positiveInt('GATEWAY_CLIENT_TIMEOUT_MS', 30_000),
    caCertFile,
    caKeyFile,
    mtlsCertFile,
    mtlsKeyFile,
    clientCertDays,
    chain: { regtest: chain('REGTEST', 18443, 50001), testnet: chain('TESTNET', 18332, 60001) },
    unlockBodyFormat: unlockBodyFormat === 'flat' ? 'flat' : 'current',
    unlockFlatVersions: str('UNLOCK_FLAT_VERSIONS', '').split(',').map((v) => v.trim()).filter(Boolean),
  };
}
