// The service's configuration: read from the environment once, validated, and passed in.
// No other module reads process.env; tests build the Config they need with `loadConfig(env)`.
import { resolve } from 'node:path';

export type RuntimeKind = 'process';

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
  runtime: RuntimeKind;
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
  /** How often workers look for due jobs when nothing woke them (they are also woken in-process). */
  jobPollIntervalMs: number;
  /** How often the reconcile loop compares desired and actual node state. */
  reconcileIntervalMs: number;
  /** Create a development user and token on the first start with an empty database. */
  bootstrapDevUser: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  production: boolean;
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
  const runtime = str('RUNTIME', 'process');
  if (runtime !== 'process') problems.push(`RUNTIME must be "process" (kubernetes is planned), got "${runtime}"`);

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
    runtime: 'process',
    rlnCommand: env.RLN_COMMAND || undefined,
    nodePortRange,
    initialImageVersion,
    nodeStartTimeoutMs: positiveInt('NODE_START_TIMEOUT_MS', 30_000),
    jobPollIntervalMs: positiveInt('JOB_POLL_INTERVAL_MS', 1_000),
    reconcileIntervalMs: positiveInt('RECONCILE_INTERVAL_MS', 5_000),
    bootstrapDevUser: bool('BOOTSTRAP_DEV_USER', !production),
    logLevel,
    production,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
