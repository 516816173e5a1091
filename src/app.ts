// The composition root: builds every part of the service from the configuration, starts them in
// order, and stops them from one shutdown path.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { openServerDatabase, type ServerDatabase } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { releaseAllLeases } from './db/jobs.ts';
import { countUsers } from './db/users.ts';
import type { Logger } from './logger.ts';
import { AccountService } from './accounts/service.ts';
import { ReleaseService } from './releases/service.ts';
import { RolloutPasses } from './releases/rollout-passes.ts';
import { NodeService } from './nodes/service.ts';
import { buildJob } from './nodes/build-job.ts';
import { Reconciler } from './nodes/reconcile.ts';
import { JobWorker } from './jobs/worker.ts';
import { createRuntime, nodePortsFor } from './runtime/create-runtime.ts';
import type { NodeRuntime } from './runtime/types.ts';
import { buildApiServer } from './api/server.ts';
import { webUi } from './web/web-ui.ts';
import { startAdminChannel } from './operator/admin-channel.ts';
import type { OperatorContext } from './operator/commands.ts';
import { WebhookKeyring } from './webhooks/signing-keys.ts';
import { WebhookService } from './webhooks/service.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';
import { WebhookSender } from './webhooks/send-webhook.ts';
import { releaseDeliveryLeases } from './db/webhook-deliveries.ts';
import { createBlobStore } from './blobs/create-blob-store.ts';
import { LogExportService } from './logs/export-service.ts';
import { logExportJob } from './logs/export-job.ts';
import { ExportJanitor } from './logs/export-janitor.ts';
import { CertificateService } from './pki/client-certificates.ts';
import { startNodeAccess } from './gateway/start-node-access.ts';

export function buildServices(db: Database, config: Config, wakeWorkers: () => void) {
  const accounts = new AccountService(db);
  const releases = new ReleaseService(db, { concurrency: config.rolloutConcurrency, failureBudget: config.rolloutFailureBudget }, wakeWorkers);
  const webhookKeys = new WebhookKeyring(config.webhooks.signingKeyFile, config.webhooks.keyOverlapMs);
  const webhooks = new WebhookService({
    db,
    keyring: webhookKeys,
    policy: { allowPrivateTargets: config.webhooks.allowPrivateTargets, httpsOnly: config.production },
  });
  const nodes = new NodeService({ db, config, wakeWorkers, assignPorts: nodePortsFor(config), checkWebhookUrl: (url) => webhooks.checkWebhookUrl(url) });
  const logExports = new LogExportService({ db, blobs: createBlobStore(config), config, wakeWorkers });
  const certificates = new CertificateService({ db, maxValidityDays: config.nodeAccess.clientCertDays });
  return { accounts, releases, nodes, webhooks, webhookKeys, logExports, certificates };
}

export interface DevCredentials {
  email: string;
  token: string;
  tokenFile: string;
}

export interface RunningServer {
  config: Config;
  db: Database;
  api: FastifyInstance;
  services: ReturnType<typeof buildServices>;
  runtime: NodeRuntime;
  /** Set on the very first start with an empty database (see BOOTSTRAP_DEV_USER). */
  devCredentials: DevCredentials | undefined;
  stop(): Promise<void>;
}

/** `opening` lets the caller start opening the database before this module is even loaded. */
export async function startServer(config: Config, log: Logger, opening?: ServerDatabase): Promise<RunningServer> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const cleanups: Array<() => Promise<void> | void> = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (err) {
        log.error({ err }, 'error during shutdown');
      }
    }
  };
  try {
    const { db: dbPromise, releaseLock } = opening ?? openServerDatabase(config);
    cleanups.push(releaseLock);
    const db = await dbPromise;
    cleanups.push(() => db.close());
    const applied = await migrate(db);
    if (applied.length > 0) log.info({ applied }, 'database migrated');

    let worker: JobWorker | undefined;
    const wakeWorkers = () => worker?.wake();
    const services = buildServices(db, config, wakeWorkers);
    await services.releases.seed(config.initialImageVersion);
    services.webhookKeys.ensure();
    const devCredentials = config.bootstrapDevUser ? await bootstrapDevUser(services.accounts, db, config.dataDir) : undefined;

    const runtime = await createRuntime(config, log.child({ part: 'runtime', runtime: config.runtime }));
    cleanups.push(() => runtime.shutdown());
    // Embedded PGlite has exactly one worker process (the lock above), so every job still marked
    // running was left by a crash of this service: take them over now rather than after their lease.
    if (db.kind === 'pglite') await releaseAllLeases(db);

    // Background loops start once every listener is up: on PGlite (one session) their first
    // queries would otherwise queue in front of the start-up's own.
    const background: Array<() => void> = [];
    // Started before the worker, so stopped after it: builds finishing during shutdown still ask for passes.
    const rolloutPasses = new RolloutPasses({ db, wakeWorkers, log: log.child({ part: 'rollouts' }) });
    background.push(() => {
      rolloutPasses.start();
      cleanups.push(() => rolloutPasses.stop());
    });
    worker = new JobWorker({
      db,
      definitions: [
        buildJob({ db, runtime, nodeStartTimeoutMs: config.nodeStartTimeoutMs, log: log.child({ part: 'builds' }), requestRolloutPass: (v) => rolloutPasses.request(v) }),
        logExportJob({ db, runtime, blobs: services.logExports.blobs, config, log: log.child({ part: 'log-exports' }) }),
      ],
      concurrency: config.jobConcurrency,
      pollIntervalMs: config.jobPollIntervalMs,
      log: log.child({ part: 'jobs' }),
    });
    background.push(() => {
      worker!.start();
      cleanups.push(() => worker!.stop());
    });

    if (db.kind === 'pglite') await releaseDeliveryLeases(db);
    const webhookDispatcher = new WebhookDispatcher({
      db,
      sender: new WebhookSender({ timeoutMs: config.webhooks.timeoutMs, allowPrivateTargets: config.webhooks.allowPrivateTargets }),
      keyring: services.webhookKeys,
      retryScheduleMs: config.webhooks.retryScheduleMs,
      timeoutMs: config.webhooks.timeoutMs,
      concurrency: config.webhooks.concurrency,
      pollIntervalMs: config.jobPollIntervalMs,
      log: log.child({ part: 'webhooks' }),
    });
    // Events this process commits go out at once; other replicas' are found by the dispatcher's poll.
    db.commitSignals.on('node-events', () => webhookDispatcher.wake());
    background.push(() => {
      webhookDispatcher.start();
      cleanups.push(() => webhookDispatcher.stop());
    });

    const reconciler = new Reconciler({
      db,
      runtime,
      advanceRollouts: () => services.releases.advanceAll(),
      intervalMs: config.reconcileIntervalMs,
      destroyedRetentionHours: config.destroyedRetentionHours,
      log: log.child({ part: 'reconcile' }),
    });
    background.push(() => {
      reconciler.start();
      cleanups.push(() => reconciler.stop());
    });

    const exportJanitor = new ExportJanitor({ db, blobs: services.logExports.blobs, config, log: log.child({ part: 'log-exports' }) });
    background.push(() => {
      exportJanitor.start();
      cleanups.push(() => exportJanitor.stop());
    });

    // The node access gateways (bearer and mutual TLS) and the certificate authority behind them.
    const nodeAccess = await startNodeAccess({ config, db, ...services, runtime, log: log.child({ part: 'gateway' }) });
    cleanups.push(() => nodeAccess.stop());

    let ready = false;
    const api = await buildApiServer({ ...services, blobs: services.logExports.blobs, unlocker: nodeAccess.unlocker, isReady: () => ready, log, publicUrl: config.publicUrl, web: webUi(db, config) });
    await api.listen({ host: config.host, port: config.apiPort });
    cleanups.push(() => api.close());

    if (db.kind === 'pglite') {
      const ctx: OperatorContext = { ...services, wakeWorkers };
      const admin = await startAdminChannel(config.dataDir, ctx, log.child({ part: 'admin' }));
      cleanups.push(() => admin.stop());
    }
    for (const start of background) start();
    ready = true;
    return { config, db, api, services, runtime, devCredentials, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

const DEV_EMAIL = 'dev@localhost';

/** On the very first start, a user and token so a newcomer can call the API at once. */
async function bootstrapDevUser(accounts: AccountService, db: Database, dataDir: string): Promise<DevCredentials | undefined> {
  if ((await countUsers(db)) > 0) return undefined;
  await accounts.createUser({ email: DEV_EMAIL, plan: 'scale' });
  const { token } = await accounts.createToken(DEV_EMAIL, 'development token');
  const tokenFile = join(dataDir, 'dev-token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  chmodSync(tokenFile, 0o600);
  return { email: DEV_EMAIL, token, tokenFile };
}
