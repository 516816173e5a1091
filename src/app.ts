// The composition root: builds every part of the service once from the configuration, in
// dependency order (composition/), starts them in order, and stops them from one shutdown path.
// Nothing imports this file but main.ts (and the tests, which start the service as a user would).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { openServerDatabase, type ServerDatabase } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { releaseAllLeases } from './db/jobs.ts';
import { releaseAllNodeLogClaims } from './db/node-log-claims.ts';
import { countUsers } from './db/users.ts';
import { usedPorts } from './db/nodes.ts';
import { releaseDeliveryLeases } from './db/webhook-deliveries.ts';
import type { Logger } from './logger.ts';
import type { AccountService } from './accounts/service.ts';
import { createRuntime } from './runtime/create-runtime.ts';
import { SealedNodeVssUrls } from './vss/node-urls.ts';
import { isLoopbackUrl } from './runtime/vss-args.ts';
import { NodeBiscuits } from './secrets/node-biscuits.ts';
import { NodeRootKeyStore } from './secrets/node-root-keys.ts';
import { NodeTokenService } from './nodes/tokens/node-tokens.ts';
import { RLN_READ_ONLY_ROUTE_NAMES } from './gateway/route-scope.ts';
import type { NodeRuntime } from './runtime/types.ts';
import { buildApiServer } from './api/server.ts';
import { webUi } from './web/web-ui.ts';
import { startAdminChannel } from './operator/admin-channel.ts';
import { loadOrCreateCertificateAuthority } from './pki/ca-store.ts';
import { startNodeAccess } from './gateway/start-node-access.ts';
import { buildServices, type Services } from './composition/services.ts';
import { buildBackground } from './composition/background.ts';
import { buildBackupService } from './composition/backups.ts';
import { buildNodeCalls, type NodeCalls } from './composition/node-calls.ts';
import { buildEventStreams, type EventStreams } from './composition/event-streams.ts';
import { loadConfiguredUnlockSeal, warnAboutUnknownSealKeys } from './composition/unlock-seal.ts';
import { AutoUnlockService } from './nodes/unlock/auto-unlock.ts';
import { checkReadiness } from './composition/readiness.ts';
import { claimSoleReplica } from './composition/sole-replica.ts';
import { REMEMBER_TOKENS_MS } from './accounts/remembered-tokens.ts';
import { drainServer } from './http/drain.ts';
import { explainListenError } from './http/listen-error.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import type { MetricOptions } from './metrics/definitions.ts';
import { startMetricsListener } from './metrics/metrics-listener.ts';
import { newReplicaId } from './jobs/leader-lease.ts';
import { setTimeout as sleep } from 'node:timers/promises';

export interface DevCredentials {
  email: string;
  token: string;
  tokenFile: string;
  /** For the web UI's sign-in; shown once at the first start, never stored in clear. */
  password: string;
}

export interface RunningServer {
  config: Config;
  db: Database;
  api: FastifyInstance;
  services: Services;
  /** Node timelines and this process's event streams. */
  events: EventStreams;
  runtime: NodeRuntime;
  /** The RLN client and what calls the daemons through it (composition/node-calls.ts). */
  nodeCalls: NodeCalls;
  metrics: ServiceMetrics;
  /** Set on the very first start with an empty database (see BOOTSTRAP_DEV_USER). */
  devCredentials: DevCredentials | undefined;
  stop(): Promise<void>;
}

/** What a benchmark may hand the service instead of what the configuration chooses. */
export interface ServerParts {
  /** A runtime already listening (bench/scale.ts: the in-memory runtime, which starts no daemons). */
  runtime?: NodeRuntime;
}

/** `opening` lets the caller start opening the database before this module is even loaded. */
export async function startServer(config: Config, log: Logger, opening?: ServerDatabase, parts: ServerParts = {}): Promise<RunningServer> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Two kinds of parts to stop. Draining ones (listeners, background work) are handed the
  // shutdown's deadline and stop together: requests and jobs in flight finish meanwhile. Then the
  // resources they used (runtime, database) are released, last opened first.
  const draining: Array<(deadline: number) => Promise<void> | void> = [];
  const cleanups: Array<() => Promise<void> | void> = [];
  const attempt = async (what: () => Promise<void> | void) => {
    try {
      await what();
    } catch (err) {
      log.error({ err }, 'error during shutdown');
    }
  };
  const releaseAll = async (deadline: number) => {
    await Promise.all(draining.map((stop) => attempt(() => stop(deadline))));
    for (const cleanup of cleanups.reverse()) await attempt(cleanup);
  };
  let state: 'starting' | 'serving' | 'stopping' = 'starting';
  try {
    const { db: dbPromise, releaseLock } = opening ?? openServerDatabase(config);
    cleanups.push(releaseLock);
    const opened = await dbPromise;
    cleanups.push(() => opened.close());
    // Every part is handed the database with its statements timed, and reports through `metrics`.
    const metrics = new ServiceMetrics(opened, log.child({ part: 'metrics' }), metricOptions(config));
    const db = metrics.database;
    // Before the slower parts: a key file that cannot be read stops the start with its reason.
    const unlockSeal = loadConfiguredUnlockSeal(config);
    const applied = await migrate(db);
    if (applied.length > 0) log.info({ applied }, 'database migrated');

    // The node access CA first: the certificate service issues with it, the mTLS gateway verifies with it.
    const ca = await loadOrCreateCertificateAuthority(config, log.child({ part: 'gateway' }));
    metrics.certificateServed('ca', ca.notAfter);
    // The runtime before the services: a new node gets its ports from it (NodeService).
    if (config.runtime === 'process' && db.kind === 'postgres') {
      const sole = await claimSoleReplica(db, config.dataDir, log);
      cleanups.push(() => sole.stop());
    }
    // Each node's Biscuit root key and the tokens minted with it (issue #40): the runtime starts a
    // daemon with its public key, the RLN client's calls and the gateways carry the tokens.
    const nodeBiscuits = new NodeBiscuits({ keys: new NodeRootKeyStore({ db, seal: unlockSeal }), log: log.child({ part: 'node-biscuits' }) });
    // Nodes with continuous state start with their own VSS URL, its credential sealed like the passwords.
    // A pod cannot reach a loopback address of this machine: there they start without one (and say so).
    const vssBaseUrl = config.vssNodeUrl ?? config.publicUrl;
    const vssUnreachable = config.runtime === 'kubernetes' && isLoopbackUrl(vssBaseUrl);
    if (vssUnreachable) log.warn({ part: 'vss', vssBaseUrl }, 'VSS_NODE_URL (or PUBLIC_URL) is a loopback address node pods cannot reach: nodes start without --vss-url; set VSS_NODE_URL');
    const vssUrls = vssUnreachable ? undefined : new SealedNodeVssUrls({ db, baseUrl: vssBaseUrl, seal: unlockSeal });
    const runtime = parts.runtime ?? (await createRuntime(config, usedPorts, log.child({ part: 'runtime', runtime: config.runtime }), metrics, vssUrls, nodeBiscuits));
    cleanups.push(() => runtime.shutdown());
    const services = buildServices(db, config, ca, unlockSeal, runtime, log, metrics);
    await services.releases.seed(config.initialImageVersion);
    for (const warning of services.webhookKeys.ensure()) log.warn({ part: 'webhooks' }, warning);
    await warnAboutUnknownSealKeys(services.unlockSealKeys, config.unlockSeal.keyFile, log);
    const devCredentials = config.bootstrapDevUser ? await bootstrapDevUser(services.accounts, db, config.dataDir) : undefined;

    // Embedded PGlite has exactly one worker process (the lock above), so every job, delivery and
    // node log claim still marked held was left by a crash of this service: take them over now
    // rather than after their lease.
    if (db.kind === 'pglite') {
      await releaseAllLeases(db);
      await releaseDeliveryLeases(db);
      await releaseAllNodeLogClaims(db);
    }
    // API calls are counted from the first request; the last counts are written on shutdown, once
    // the listeners have drained and before the database closes (cleanups run last added first).
    const { meter } = services;
    meter.start();
    cleanups.push(() => meter.stop());
    // Every call to a daemon goes through one RLN client, closed once everything using it stopped.
    const nodeCalls = buildNodeCalls({ config, db, runtime, nodes: services.nodes, audit: services.audit, bearers: nodeBiscuits, seal: unlockSeal, log: log.child({ part: 'gateway' }) });
    cleanups.push(() => nodeCalls.rln.close());
    // The node access gateways (bearer and mutual TLS).
    const nodeAccess = await startNodeAccess({ config, db, ...services, ca, runtime, ...nodeCalls, meter, metrics, log: log.child({ part: 'gateway' }) });
    draining.push((deadline) => nodeAccess.stop(deadline));
    // Unlocks through the gateways' unlocker: the same body, chain settings and records as a user's.
    const autoUnlock = new AutoUnlockService({
      db,
      seal: unlockSeal,
      unlocker: nodeCalls.unlocker,
      audit: services.audit,
      log: log.child({ part: 'auto-unlock' }),
    });
    const replicaId = newReplicaId();
    const backups = buildBackupService({ db, config, runtime, services, nodeCalls, replicaId, metrics, log: log.child({ part: 'backups' }) });
    draining.push((deadline) => backups.stop(deadline));
    const background = buildBackground({ db, config, runtime, services, rln: nodeCalls.rln, bearers: nodeCalls.bearers, autoUnlock, replicaId, metrics, log });
    // Started with the listener (it reads nothing until a stream opens); stopped as the drain
    // begins, ending every stream at once so none holds the shutdown.
    const events = buildEventStreams(db, config, services.accounts, log.child({ part: 'event-streams' }));
    events.hub.start();
    events.memberWatch.start();
    draining.push(() => events.hub.stop());
    draining.push(() => events.memberWatch.stop());

    // Customers' own node tokens (issue #40, point 4), capped by their minters' roles.
    const nodeTokens = new NodeTokenService({
      db,
      seal: unlockSeal,
      keys: new NodeRootKeyStore({ db, seal: unlockSeal }),
      revocations: nodeCalls.revocations,
      readOnlyRoutes: RLN_READ_ONLY_ROUTE_NAMES,
      nodeApiUrl: config.nodeApiUrl,
      accounts: services.accounts,
      log: log.child({ part: 'node-tokens' }),
    });
    const api = await buildApiServer({
      ...services,
      nodeTokens,
      unlocker: nodeCalls.unlocker,
      backups,
      backupLimits: config.backups,
      meter,
      rateLimits: { perTokenPerMinute: config.apiRateLimitPerMinute, perUserPerMinute: config.apiUserRateLimitPerMinute },
      autoUnlock,
      health: nodeCalls.health,
      continuousState: nodeCalls.continuousState,
      nodeEvents: events.timeline,
      eventHub: events.hub,
      memberWatch: events.memberWatch,
      eventStreamBuffer: events.buffer,
      isReady: () => state !== 'starting',
      readiness: () => checkReadiness({ db, runtime, serviceState: () => (state === 'serving' ? 'ok' : state) }),
      log,
      publicUrl: config.publicUrl,
      web: webUi(db, config, services.audit),
      cors: config.cors,
      trustedProxies: config.trustedProxies,
      requestMetrics: metrics,
      // Exact only where this process is the database's only one (accounts/remembered-tokens.ts).
      rememberTokensMs: db.kind === 'pglite' ? REMEMBER_TOKENS_MS : 0,
      docs: 'lazy',
    });
    await api.listen({ host: config.host, port: config.apiPort }).catch((err: unknown) => {
      throw explainListenError(err, 'API_PORT', config.host, config.apiPort);
    });
    draining.push((deadline) => drainServer(api.server, deadline, () => api.close()).then(() => undefined));
    if (config.metricsPort > 0) {
      const metricsListener = await startMetricsListener({ registry: metrics.registry, host: config.host, port: config.metricsPort, log });
      draining.push((deadline) => metricsListener.stop(deadline));
    }

    if (db.kind === 'pglite') {
      const admin = await startAdminChannel(config.dataDir, services, log.child({ part: 'admin' }));
      cleanups.push(() => admin.stop());
    }
    // Background loops start once every listener is up: on PGlite (one session) their first
    // queries would otherwise queue in front of the start-up's own. Stopped last started first.
    for (const part of background) part.start();
    draining.push(async (deadline) => {
      for (const part of [...background].reverse()) await attempt(() => part.stop(deadline));
    });
    state = 'serving';
    log.info({ replica: replicaId }, 'serving');
    // One shutdown, however often asked for: a second call waits for the first.
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        state = 'stopping';
        if (config.shutdownDelayMs > 0) {
          log.info({ delayMs: config.shutdownDelayMs }, 'not ready any more; still accepting while load balancers catch up');
          await sleep(config.shutdownDelayMs);
        }
        log.info({ timeoutMs: config.shutdownTimeoutMs }, 'stopping: no new connections or work; finishing what is in flight');
        await releaseAll(Date.now() + config.shutdownTimeoutMs);
      })());
    return { config, db, api, services, events, runtime, nodeCalls, metrics, devCredentials, stop };
  } catch (err) {
    await releaseAll(Date.now());
    throw err;
  }
}

const DEV_EMAIL = 'dev@localhost';

/** On the very first start, a user with a token (the API) and a password (the web UI), so a newcomer can use both at once. */
async function bootstrapDevUser(accounts: AccountService, db: Database, dataDir: string): Promise<DevCredentials | undefined> {
  if ((await countUsers(db)) > 0) return undefined;
  const password = randomBytes(12).toString('base64url');
  await accounts.createUser({ email: DEV_EMAIL, plan: 'scale', password });
  const { token } = await accounts.createToken(DEV_EMAIL, 'development token');
  const tokenFile = join(dataDir, 'dev-token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  chmodSync(tokenFile, 0o600);
  return { email: DEV_EMAIL, token, tokenFile, password };
}

/** What the metrics report besides the service's own: the runtime's requests, its peer-port range, the VSS soft limit. */
function metricOptions(config: Config): MetricOptions {
  const vss = { vssSoftLimitBytes: config.vssMaxBytesPerNode, vssPendingSampleMaxAgeMs: 3 * config.vssPendingCheckIntervalMs };
  if (!config.kubernetes) return { ...vss, nodePortRange: config.nodePortRange };
  const { peerServiceType, peerPortRange, nodePortRange } = config.kubernetes;
  if (peerServiceType === 'HostPort') return { ...vss, kubernetes: true, nodePortRange: peerPortRange };
  if (peerServiceType === 'NodePort') return { ...vss, kubernetes: true, nodePortRange: { ...nodePortRange, countNodes: true } };
  return { ...vss, kubernetes: true };
}
