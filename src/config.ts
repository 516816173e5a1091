// The service's configuration: read from the environment once, validated, and passed in.
// No other module reads process.env; tests build the Config they need with `loadConfig(env)`.
import { resolve } from 'node:path';
import { Type } from '@sinclair/typebox';
import { boolean, duration, format, integer, matching, oneOf, port, text, url } from './env/formats.ts';
import { readEnv, variable, type Env } from './env/variable.ts';
import { parseCorsOrigins, type CorsPolicy } from './http/cors.ts';
import { readNodeAccessConfig, type NodeAccessConfig } from './gateway/settings.ts';
import { readLogsConfig, type LogsConfig } from './logs/settings.ts';
import { readBackupsConfig, type BackupsConfig } from './backups/settings.ts';
import { readUsageConfig, type UsageConfig } from './usage/settings.ts';
import { readBlobStoreConfig, type BlobStoreConfig } from './blobs/settings.ts';
import { readWebhookConfig, type WebhookConfig } from './webhooks/settings.ts';
import { readEventStreamConfig, type EventStreamConfig } from './events/settings.ts';
import { readUnlockSealConfig, type UnlockSealConfig } from './secrets/settings.ts';
import { readKubernetesConfig, type KubernetesConfig } from './runtime/kubernetes/settings.ts';
import { chainEndpointProblems, initialVersionProblems } from './runtime/kubernetes/chain-endpoints.ts';
import { readCliConfig, type CliConfig } from './cli/settings.ts';
import { readPasswordHashingConfig, type PasswordHashingConfig } from './auth/settings.ts';
import { passedToDaemons } from './runtime/daemon-env.ts';
import { trustedProxiesFormat, type TrustedProxies } from './http/client-address.ts';
import { readMailConfig, type MailConfig } from './mail/settings.ts';
import { readSignupConfig, type SignupConfig } from './signup/settings.ts';
import { readOidcConfig, type OidcProvider } from './oidc/settings.ts';

export type { ChainSettings, NodeAccessConfig } from './gateway/settings.ts';

export type RuntimeKind = 'process' | 'kubernetes';

export interface Config {
  /** Where PGlite data, node storage, logs, keys and the dev token live. */
  dataDir: string;
  /** Interface the listeners bind; loopback by default so a laptop exposes nothing. */
  host: string;
  apiPort: number;
  nodeApiPort: number;
  mtlsPort: number;
  /** The Prometheus metrics listener (metrics/); 0: none. */
  metricsPort: number;
  /** Public base URLs: what clients are told, which may differ from the listeners (proxies). */
  publicUrl: string;
  nodeApiUrl: string;
  userNodeUrl: string;
  connectPageUrl: string;
  /** Unset: embedded PGlite in DATA_DIR/pglite. */
  databaseUrl: string | undefined;
  /** What runs the nodes: child processes on this machine, or pods on a Kubernetes cluster. */
  runtime: RuntimeKind;
  /** Set with RUNTIME=kubernetes (K8S_* variables; see runtime/kubernetes/settings.ts). */
  kubernetes: KubernetesConfig | undefined;
  /**
   * Command that starts one node daemon. Unset: devnode from this repository. The template may
   * use {version}; the runtime appends RLN's own arguments (storage dir, ports, network, auth).
   */
  rlnCommand: string | undefined;
  /** Ports handed to node daemons (REST and Lightning peer), allocated in pairs. */
  nodePortRange: { from: number; to: number };
  /**
   * What node daemons of the process runtime see of the service's environment (only what a program
   * needs and devnode's settings, runtime/daemon-env.ts), read here so nothing else reads process.env.
   */
  daemonEnvironment: Env;
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
  nodeStorageCheckIntervalMs: number;
  /** Release rollouts: how many nodes upgrade at once, and how many failures pause a rollout. */
  rolloutConcurrency: number;
  rolloutFailureBudget: number;
  /** VSS_NODE_URL: the base URL node daemons reach the service's VSS server at (unset: PUBLIC_URL). */
  vssNodeUrl?: string;
  /** VSS_MAX_BYTES_PER_NODE: the soft limit of a node's VSS store (alerted and shown, never refused). */
  vssMaxBytesPerNode: number;
  /** VSS_PENDING_CHECK_INTERVAL_MS: how often running nodes with continuous state are asked their pending VSS writes. */
  vssPendingCheckIntervalMs: number;
  /** How long a DESTROYED node stays readable before its record is deleted. */
  destroyedRetentionHours: number;
  /**
   * Shutdown on SIGTERM: how long the listeners keep taking new connections while /readyz says
   * no (so load balancers and kube-proxy stop sending first), and how long requests, gateway
   * streams and jobs in flight then get to finish before they are cut off.
   */
  shutdownDelayMs: number;
  shutdownTimeoutMs: number;
  /** Requests per minute, per replica: per API token and per user on the API, per token or certificate on the gateways; 0 is no limit. */
  apiRateLimitPerMinute: number;
  apiUserRateLimitPerMinute: number;
  gatewayRateLimitPerMinute: number;
  /** Which peers are proxies whose forwarded client address every listener believes (http/client-address.ts). */
  trustedProxies: TrustedProxies;
  /** Which browser origins may call the management API and the bearer gateway; null: none. */
  cors: CorsPolicy | null;
  /** The node access gateways (bearer and mutual TLS), their CA and what unlock adds; see gateway/. */
  nodeAccess: NodeAccessConfig;
  /** Create a development user and token on the first start with an empty database. */
  bootstrapDevUser: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** JSON lines, readable lines, or readable on a terminal and JSON otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  production: boolean;
  /** Daemon log rotation and log exports (LOG_* variables; see logs/settings.ts). */
  logs: LogsConfig;
  backups: BackupsConfig;
  /** API call metering and the closing of months (USAGE_*; see usage/settings.ts). */
  usage: UsageConfig;
  /** Where log export archives are stored (BLOB_STORE, S3_*; see blobs/settings.ts). */
  blobStore: BlobStoreConfig;
  /** Webhook targets, retries, timeout and signing keys (WEBHOOK_*; see webhooks/settings.ts). */
  webhooks: WebhookConfig;
  /** The event streams' caps, buffer, heartbeat and poll (EVENT_STREAM*; see events/settings.ts). */
  eventStreams: EventStreamConfig;
  /** The key file that seals the passwords of nodes with automatic unlock (UNLOCK_SEAL_KEY_FILE; see secrets/settings.ts). */
  unlockSeal: UnlockSealConfig;
  /** How many password hashes run and wait at once (PASSWORD_HASH_*; see auth/settings.ts). */
  passwordHashing: PasswordHashingConfig;
  /** Email delivery: SMTP, From, the service's name (SMTP_URL, MAIL_FROM, SERVICE_NAME; see mail/settings.ts). */
  mail: MailConfig;
  /** Self-service sign-up (SIGNUP_*; see signup/settings.ts). */
  signup: SignupConfig;
  /** OpenID Connect providers for sign-in (OIDC_*; see oidc/settings.ts). */
  oidcProviders: OidcProvider[];
  /** The user commands of the CLI: where the management API is and the token they call it with. */
  cli: CliConfig;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Two ports per node (REST, Lightning peer); below 1024 would need root, so it is refused. */
const portRange = format(
  Type.Object({ from: Type.Integer({ minimum: 1024, maximum: 65535 }), to: Type.Integer({ minimum: 1024, maximum: 65535 }) }),
  'be "<from>-<to>" within 1024-65535 with room for a pair',
  (t) => {
    const m = /^(\d+)-(\d+)$/.exec(t);
    return m && Number(m[2]) - Number(m[1]) >= 1 ? { from: Number(m[1]), to: Number(m[2]) } : undefined;
  },
);

// Every default is what a developer's laptop needs and exposes nothing: listeners on loopback,
// embedded PGlite, nodes as local processes. A deployment sets the public URLs and DATABASE_URL.
export const SERVICE_VARIABLES = {
  dataDir: variable('DATA_DIR', text(), {
    default: './data',
    doc: 'PGlite database, node storage and logs, the dev token, lock and admin files',
  }),
  host: variable('HOST', text(), {
    default: '127.0.0.1',
    doc: 'interface the listeners bind (loopback: a laptop exposes nothing)',
  }),
  apiPort: variable('API_PORT', port(), { default: '8080', doc: 'management API listener' }),
  nodeApiPort: variable('NODE_API_PORT', port(), { default: '8081', doc: 'bearer node-access gateway listener' }),
  mtlsPort: variable('MTLS_PORT', port(), { default: '8443', doc: 'mutual-TLS gateway listener' }),
  // 9464: the port OpenTelemetry's Prometheus exporter made the usual one. On HOST like the others,
  // so a laptop exposes nothing; a deployment must keep it off the public network (see "Metrics").
  metricsPort: variable('METRICS_PORT', integer(0, 65535, 'be a TCP port between 1 and 65535, or 0 for no metrics listener'), {
    default: '9464',
    doc: 'Prometheus metrics listener (`GET /metrics`, see [Metrics](OPERATIONS.md#metrics)); internal only, never expose it publicly; `0`: no listener',
  }),
  publicUrl: variable('PUBLIC_URL', url(['http:', 'https:']), {
    unset: '`http://<HOST>:<API_PORT>`',
    doc: 'base URL clients use for the API (may differ behind a proxy); its host is the passkeys\' relying party, so passkeys need a host name here, not an IP address (`http://localhost:<API_PORT>` on a laptop)',
  }),
  nodeApiUrl: variable('NODE_API_URL', url(['http:', 'https:']), {
    unset: '`http://<HOST>:<NODE_API_PORT>`',
    doc: "base of each node's `invoke_url`",
  }),
  // https only: clients authenticate to this address with their certificate.
  userNodeUrl: variable('USER_NODE_URL', url(['https:']), {
    unset: '`https://<HOST>:<MTLS_PORT>`',
    doc: 'base of the mutual-TLS node address',
  }),
  connectPageUrl: variable('CONNECT_PAGE_URL', url(['http:', 'https:']), {
    unset: '`<PUBLIC_URL>/nodes`',
    doc: 'base of the node and connect pages',
  }),
  databaseUrl: variable('DATABASE_URL', matching(/^postgres(ql)?:\/\//, 'be a postgres:// or postgresql:// URL'), {
    unset: 'unset: PGlite in `DATA_DIR/pglite`',
    doc: '`postgres://...` to use a PostgreSQL server',
    secret: true,
  }),
  runtime: variable('RUNTIME', oneOf(['process', 'kubernetes']), {
    default: 'process',
    doc: 'what runs the nodes: `process` (child processes on this machine) or `kubernetes` (pods on a cluster; `K8S_*` settings in [Kubernetes runtime](#kubernetes-runtime) below)',
  }),
  rlnCommand: variable('RLN_COMMAND', text(), {
    unset: 'unset: devnode',
    doc: 'command template for the node daemon, `{version}` substituted',
  }),
  // Below Linux's ephemeral range (32768+), so outgoing connections never take a node's port.
  nodePortRange: variable('NODE_PORT_RANGE', portRange, {
    default: '39000-39999',
    doc: 'host ports the process runtime hands to daemons, two per node (REST, Lightning peer)',
  }),
  initialImageVersion: variable('INITIAL_IMAGE_VERSION', matching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'be 1-64 characters of letters, digits, ".", "_" or "-"'), {
    default: 'devnode-0.1.0',
    doc: 'the image version seeded into an empty release catalog',
  }),
  nodeStartTimeoutMs: variable('NODE_START_TIMEOUT_MS', integer(1), {
    default: '30000',
    doc: 'how long a started daemon may take to answer before the attempt fails',
  }),
  jobConcurrency: variable('JOB_CONCURRENCY', integer(1), {
    default: '8',
    doc: 'how many jobs (builds, log exports) one process carries out at once',
  }),
  jobPollIntervalMs: variable('JOB_POLL_INTERVAL_MS', integer(1), {
    default: '1000',
    doc: 'how often workers look for due jobs (they are also woken in-process)',
  }),
  reconcileIntervalMs: variable('RECONCILE_INTERVAL_MS', integer(1), {
    default: '5000',
    doc: 'how often desired and actual node state are compared',
  }),
  // Each measurement walks a node's files (a command in its pod on Kubernetes): minutes apart is
  // plenty to see a volume filling, and cheap at thousands of nodes.
  nodeStorageCheckIntervalMs: variable('NODE_STORAGE_CHECK_INTERVAL_MS', integer(1000), {
    default: '300000',
    doc: "the pause between two measurements of the running nodes' storage use",
  }),
  rolloutConcurrency: variable('ROLLOUT_CONCURRENCY', integer(1), {
    default: '5',
    doc: 'how many nodes a release rollout upgrades at once',
  }),
  // 0 is allowed: pause a rollout at its first failure.
  rolloutFailureBudget: variable('ROLLOUT_FAILURE_BUDGET', integer(0), {
    default: '3',
    doc: 'a rollout pauses when more upgrades than this have failed',
  }),
  // A soft limit: a store past it is alerted on and shown on its node, never refused a write (a
  // refused write stalls the node's channels). 1 GiB is far above a busy node's channel state.
  // Nodes on Kubernetes reach the service inside the cluster (deploy/kubernetes/base/network-policy.yaml
  // lets them to its API port), not through the public address and its ingress.
  vssNodeUrl: variable('VSS_NODE_URL', url(['http:', 'https:']), {
    unset: 'unset: `PUBLIC_URL`',
    doc: "base URL node daemons reach the service's VSS server at, for nodes with continuous state (on Kubernetes the service's in-cluster address, e.g. `http://rln-cloud.rln-cloud.svc:8080`; plain http adds `--vss-allow-http`)",
  }),
  vssMaxBytesPerNode: variable('VSS_MAX_BYTES_PER_NODE', integer(1), {
    default: '1073741824',
    doc: "the bytes a node's VSS store may hold before it is alerted on and shown on the node (writes are never refused)",
  }),
  // A node's pending writes are state it has not in VSS yet: one request per running node a
  // minute is cheap, and the alert waits 10 minutes, so a minute apart sees a queue that stays.
  vssPendingCheckIntervalMs: variable('VSS_PENDING_CHECK_INTERVAL_MS', integer(1000), {
    default: '60000',
    doc: "the pause between two passes asking the unlocked nodes with continuous state their pending VSS writes (`/vssbackupinfo`), for the rlncloud_vss_nodes_with_pending_writes gauge",
  }),
  destroyedRetentionHours: variable('DESTROYED_RETENTION_HOURS', integer(1), {
    default: '168',
    doc: 'how long a DESTROYED node stays readable',
  }),
  // Derived from NODE_ENV in loadConfig: any origin on a laptop, none in production unless listed.
  cors: variable('CORS_ALLOWED_ORIGINS', format(Type.Unknown(), 'be *, none, or comma-separated origins such as https://wallet.example (scheme, host and port only)', (t) => {
    const policy = parseCorsOrigins(t);
    return policy === null ? ('none' as const) : policy;
  }), {
    unset: '`*` unless `NODE_ENV=production` (then `none`)',
    doc: 'browser origins allowed to call the management API and the bearer gateway (CORS): `*`, `none`, or a comma-separated list; preflights are cached 10 minutes; never with credentials (cookies)',
  }),
  shutdownDelayMs: variable('SHUTDOWN_DELAY', duration(0), {
    default: '0s',
    doc: 'after SIGTERM, how long the listeners keep accepting while `/readyz` answers 503, so load balancers stop sending first (the Kubernetes manifests set `5s`)',
  }),
  shutdownTimeoutMs: variable('SHUTDOWN_TIMEOUT', duration(0), {
    default: '20s',
    doc: 'then how long requests, gateway streams, builds and webhook deliveries in flight get to finish before they are cut off and their leases handed back (keep delay + timeout below the pod\'s `terminationGracePeriodSeconds`)',
  }),
  // Generous for any client that is not a runaway loop: ten requests a second, sustained.
  apiRateLimitPerMinute: variable('API_RATE_LIMIT_PER_MINUTE', integer(0, 1_000_000), {
    default: '600',
    doc: 'management API requests per minute per API token, per replica (429 with `Retry-After` past it); `0`: no limit',
  }),
  // Twice the token limit: a user's several tokens together, and the web UI's session.
  apiUserRateLimitPerMinute: variable('API_USER_RATE_LIMIT_PER_MINUTE', integer(0, 1_000_000), {
    default: '1200',
    doc: "management API requests per minute per user (all of the user's tokens and web sessions), per replica; `0`: no limit",
  }),
  // A node's API is the user's business with their own node (payments, channels): a high ceiling
  // against runaway clients, not a quota.
  gatewayRateLimitPerMinute: variable('GATEWAY_RATE_LIMIT_PER_MINUTE', integer(0, 100_000_000), {
    default: '6000',
    doc: 'node gateway requests per minute per API token (bearer) or client certificate (mutual TLS), per replica; `0`: no limit',
  }),
  // Nobody by default: believing X-Forwarded-For from any peer would let every client pick its own
  // address (and so its own sign-in throttle and audit trail entry).
  trustedProxies: variable('TRUSTED_PROXIES', trustedProxiesFormat(), {
    default: '',
    doc: "the load balancers and Ingress controllers in front of the listeners, whose forwarded client address the API (`X-Forwarded-For`), the bearer gateway (`X-Forwarded-For`) and the mutual-TLS gateway (a PROXY protocol header, `MTLS_PROXY_PROTOCOL`) believe: comma-separated addresses and CIDR ranges (`10.0.0.0/8`, `loopback`), or a hop count (`1`: the nearest proxy, whoever connects; only where nothing else can reach the listeners); empty: none, each connection's peer is the client. Sign-in throttling per address, the audit trail and the gateways' `X-Forwarded-For` to nodes use that address (see [Behind a load balancer](DEPLOY.md#behind-a-load-balancer))",
  }),
  // Derived from NODE_ENV in loadConfig: a known token is handy on a laptop and a hole in production.
  bootstrapDevUser: variable('BOOTSTRAP_DEV_USER', boolean(), {
    unset: '`true` unless `NODE_ENV=production`',
    doc: 'create `dev@localhost` and a token on first start',
  }),
  logLevel: variable('LOG_LEVEL', oneOf(LOG_LEVELS), { default: 'info', doc: 'pino level: `fatal` ... `trace`, `silent`' }),
  logFormat: variable('LOG_FORMAT', oneOf(['auto', 'json', 'pretty']), {
    default: 'auto',
    doc: '`json` lines, `pretty` lines for people, or `auto`: pretty on a terminal, JSON otherwise',
  }),
  // Free text: tools set NODE_ENV=test or staging; only "production" changes anything here.
  nodeEnv: variable('NODE_ENV', text(), { default: 'development', doc: '`production` tightens defaults' }),
};

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const { nodeEnv, ...values } = readEnv(SERVICE_VARIABLES, env, problems);
  const production = nodeEnv === 'production';
  const dataDir = resolve(values.dataDir);
  // Public URLs default to what the listeners are reachable at from this machine.
  const reachableHost = values.host === '0.0.0.0' || values.host === '::' ? '127.0.0.1' : values.host;
  const publicUrl = values.publicUrl ?? `http://${reachableHost}:${values.apiPort}`;
  const config: Config = {
    ...values,
    dataDir,
    publicUrl,
    nodeApiUrl: values.nodeApiUrl ?? `http://${reachableHost}:${values.nodeApiPort}`,
    userNodeUrl: values.userNodeUrl ?? `https://${reachableHost}:${values.mtlsPort}`,
    connectPageUrl: values.connectPageUrl ?? `${publicUrl}/nodes`,
    kubernetes: values.runtime === 'kubernetes' ? readKubernetesConfig(env, problems) : undefined,
    nodeAccess: readNodeAccessConfig(env, problems),
    bootstrapDevUser: values.bootstrapDevUser ?? !production,
    cors: values.cors === 'none' ? null : (values.cors as CorsPolicy | undefined) ?? (production ? null : { origins: '*' }),
    production,
    logs: readLogsConfig(env, problems),
    backups: readBackupsConfig(env, problems),
    usage: readUsageConfig(env, problems),
    blobStore: readBlobStoreConfig(env, problems),
    webhooks: readWebhookConfig(env, problems, { dataDir, production }),
    eventStreams: readEventStreamConfig(env, problems),
    unlockSeal: readUnlockSealConfig(env, problems, { dataDir }),
    passwordHashing: readPasswordHashingConfig(env, problems),
    mail: readMailConfig(env, problems),
    signup: readSignupConfig(env, problems),
    oidcProviders: readOidcConfig(env, problems),
    cli: readCliConfig(env, problems),
    daemonEnvironment: passedToDaemons(env),
  };
  // Cross-field: the real daemon in a pod needs an image version of its own and chain backends
  // that are not on loopback.
  if (config.kubernetes) {
    const { chain, unlockBodyFormat, unlockFlatVersions } = config.nodeAccess;
    problems.push(...initialVersionProblems(config.kubernetes, values.initialImageVersion));
    problems.push(...chainEndpointProblems(config.kubernetes, chain, { flatBodies: unlockBodyFormat === 'flat' || unlockFlatVersions.length > 0 }));
  }
  // A PROXY header names the client for the connection's peer: only a peer named by address can be
  // trusted to send one (a hop count would trust whoever connects).
  if (config.nodeAccess.mtlsProxyProtocol === 'on' && config.trustedProxies.kind !== 'cidrs') {
    problems.push('MTLS_PROXY_PROTOCOL=on needs TRUSTED_PROXIES to list the load balancers\' addresses or ranges (not empty, not a hop count)');
  }
  // Strangers signing up must receive their links: only a laptop (embedded PGlite, the process
  // runtime) may keep messages in the outbox for its developer to read.
  if ((config.signup.mode === 'open' || config.signup.mode === 'approval') && !config.mail.smtpUrl && (config.databaseUrl || config.kubernetes)) {
    problems.push(`SIGNUP_MODE=${config.signup.mode} needs SMTP_URL with PostgreSQL or on Kubernetes: people who sign up must receive their verification email`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * What a configuration allows but an operator should hear about at start (logged as warnings by
 * `serve`): settings that work and are still unsafe.
 */
export function configWarnings(config: Pick<Config, 'production' | 'publicUrl' | 'nodeApiUrl'>): string[] {
  const warnings: string[] = [];
  if (config.production && config.publicUrl.startsWith('http://')) {
    warnings.push(
      "NODE_ENV=production with an http:// PUBLIC_URL: API tokens and passwords travel in clear and the web UI's session cookie is not Secure. " +
        'Put TLS in front of the service and set PUBLIC_URL to its https:// address.',
    );
  }
  // The original's clients build node URLs as NODE_API_URL + invoke_url.split('/nodes')[1]: a
  // '/nodes' inside NODE_API_URL itself (a host such as nodes.example.com) is split on first.
  if (config.nodeApiUrl.includes('/nodes')) {
    warnings.push(
      `NODE_API_URL (${config.nodeApiUrl}) contains "/nodes": clients of the original service split invoke_url on "/nodes" and would build wrong node URLs. ` +
        'Use a host name and path without "/nodes" (e.g. https://gateway.example.com).',
    );
  }
  return warnings;
}
