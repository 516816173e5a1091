// The long-running parts of a serving process, built in dependency order and returned in the
// order they start; app.ts starts them once every listener is up and stops them in reverse.
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import { rolloutPassJob } from '../nodes/rollout/pass-job.ts';
import { authenticationRolloutPassJob } from '../nodes/rollout/authentication-pass-job.ts';
import { buildJobs } from '../nodes/builds/build-jobs.ts';
import { Reconciler } from '../nodes/upkeep/reconcile.ts';
import { JobWorker } from '../jobs/worker.ts';
import { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { WebhookSender } from '../webhooks/send-webhook.ts';
import { logExportJob } from '../logs/export-job.ts';
import { ExportJanitor } from '../logs/export-janitor.ts';
import { nodeLogsOf } from '../logs/runtime-logs.ts';
import { BackupJanitor } from '../backups/janitor.ts';
import { VssJanitor } from '../vss/vss-janitor.ts';
import { NodeRestorer } from '../backups/restore-into-node.ts';
import { rlnBackupCalls } from '../backups/rln-node-calls.ts';
import type { RlnClient } from '../rln/client.ts';
import type { NodeBearers } from '../rln/node-bearer.ts';
import type { Services } from './services.ts';
import { AutoUnlockRequests, autoUnlockJob } from '../nodes/unlock/auto-unlock-job.ts';
import type { AutoUnlockService } from '../nodes/unlock/auto-unlock.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import { MonthCloser } from '../usage/close-month.ts';
import { StorageMeter } from '../nodes/upkeep/storage-meter.ts';
import { VssPendingMeter } from '../nodes/upkeep/vss-pending-meter.ts';
import { NodeDaemons } from '../nodes/node-daemons.ts';
import { sendEmailJob } from '../mail/send-email-job.ts';
import { smtpTransport } from '../mail/transport.ts';
import { linkRequestJob } from '../signup/link-request-job.ts';
import { nodeEventNoticeJob } from '../notifications/node-event-job.ts';
import { OutboxJanitor } from '../mail/outbox-janitor.ts';

export interface BackgroundPart {
  start(): void;
  /** Stops taking new work; what is in hand may run until `deadline` (epoch ms), where a part supports it. */
  stop(deadline?: number): Promise<void> | void;
}

export interface BackgroundDeps {
  db: Database;
  config: Config;
  runtime: NodeRuntime;
  services: Pick<Services, 'releases' | 'webhookKeys' | 'blobs' | 'backupBlobs' | 'nodeLogBlobs' | 'vssBlobs' | 'nodes' | 'unlockSeal' | 'signup' | 'notifications'>;
  /** The one client of the daemons (composition/node-calls.ts). */
  rln: RlnClient;
  /** The Biscuits the service's calls to nodes carry (issue #40). */
  bearers?: NodeBearers;
  /** Unlocks nodes with automatic unlock after their daemon started (its job). */
  autoUnlock: AutoUnlockService;
  /** This process's name among the replicas (the reconcile lease's holder). */
  replicaId: string;
  /** What builds, jobs, webhook deliveries and backups report to (metrics/). */
  metrics?: ServiceMetrics;
  log: Logger;
}

/** Restores of nodes created from a backup, done by their create build. */
function nodeRestorer({ db, config, runtime, services, rln, bearers, log }: Omit<BackgroundDeps, 'replicaId' | 'autoUnlock' | 'metrics'>) {
  return new NodeRestorer({
    db,
    blobs: services.backupBlobs,
    runtime,
    calls: rlnBackupCalls(rln, config.backups.nodeTimeoutMs),
    seal: services.unlockSeal,
    nodes: services.nodes,
    // A daemon stops faster than it starts: a superseded node still up after this is stuck.
    supersededStopWaitMs: config.nodeStartTimeoutMs,
    bearers,
    log,
  });
}

export function buildBackground({ db, config, runtime, services, rln, bearers, autoUnlock, replicaId, metrics, log }: BackgroundDeps): BackgroundPart[] {
  const nodeLogs = nodeLogsOf(runtime.logs, { db, blobs: services.nodeLogBlobs, holder: replicaId, config, log: log.child({ part: 'node-logs' }) });
  const builds = { db, runtime, nodeStartTimeoutMs: config.nodeStartTimeoutMs, rln, log: log.child({ part: 'builds' }), metrics };
  // Woken by the 'jobs' commit signal of every job this process enqueues (see db/commit-signals.ts).
  // Without SMTP_URL messages stay in the outbox: no job is enqueued, none is run.
  const transport = config.mail.smtpUrl === undefined ? undefined : smtpTransport(config.mail.smtpUrl);
  const worker = new JobWorker({
    db,
    definitions: [
      linkRequestJob({ signup: services.signup }),
      nodeEventNoticeJob({ notifications: services.notifications }),
      ...(transport ? [sendEmailJob({ db, transport, from: config.mail.from, publicUrl: config.publicUrl, log: log.child({ part: 'mail' }) })] : []),
      ...buildJobs({ ...builds, restorer: nodeRestorer({ db, config, runtime, services, rln, bearers, log: log.child({ part: 'restores' }) }) }),
      logExportJob({ db, logs: nodeLogs.reader, blobs: services.blobs, config, log: log.child({ part: 'log-exports' }) }),
      autoUnlockJob({ autoUnlock, log: log.child({ part: 'auto-unlock' }) }),
      rolloutPassJob({ db, log: log.child({ part: 'rollouts' }) }),
      authenticationRolloutPassJob({ db, log: log.child({ part: 'authentication-rollout' }) }),
    ],
    concurrency: config.jobConcurrency,
    pollIntervalMs: config.jobPollIntervalMs,
    log: log.child({ part: 'jobs' }),
    metrics,
  });
  const webhookDispatcher = new WebhookDispatcher({
    db,
    sender: new WebhookSender({ timeoutMs: config.webhooks.timeoutMs, allowPrivateTargets: config.webhooks.allowPrivateTargets }),
    keyring: services.webhookKeys,
    retryScheduleMs: config.webhooks.retryScheduleMs,
    timeoutMs: config.webhooks.timeoutMs,
    concurrency: config.webhooks.concurrency,
    pollIntervalMs: config.jobPollIntervalMs,
    log: log.child({ part: 'webhooks' }),
    metrics,
  });
  // Events this process commits go out at once; other replicas' are found by the dispatcher's poll.
  db.commitSignals.on('node-events', () => webhookDispatcher.wake());
  // A node event may have queued its notice (migration 0036's trigger), which no 'jobs' signal announces.
  db.commitSignals.on('node-events', () => worker.wake());
  const reconciler = new Reconciler({
    db,
    runtime,
    intervalMs: config.reconcileIntervalMs,
    destroyedRetentionHours: config.destroyedRetentionHours,
    replicaId,
    metrics,
    log: log.child({ part: 'reconcile' }),
  });
  const exportJanitor = new ExportJanitor({ db, blobs: services.blobs, config, log: log.child({ part: 'log-exports' }) });
  const backupJanitor = new BackupJanitor({
    db,
    blobs: services.backupBlobs,
    runtime,
    config,
    dataDir: config.dataDir,
    autoUnlock: new AutoUnlockRequests(db),
    log: log.child({ part: 'backups' }),
    metrics,
  });
  // Every replica looks; the first to find last month due closes it (usage/close-month.ts).
  const monthCloser = new MonthCloser({ db, graceMs: config.usage.monthCloseGraceMs, checkIntervalMs: 60_000, log: log.child({ part: 'usage' }) });
  const storageMeter = new StorageMeter({ db, runtime, intervalMs: config.nodeStorageCheckIntervalMs, replicaId, log: log.child({ part: 'storage' }) });
  const vssPendingMeter = new VssPendingMeter({
    db,
    runtime,
    daemons: new NodeDaemons(runtime, rln, bearers),
    intervalMs: config.vssPendingCheckIntervalMs,
    replicaId,
    log: log.child({ part: 'vss' }),
  });
  const vssJanitor = new VssJanitor({ db, blobs: services.vssBlobs, destroyedRetentionHours: config.destroyedRetentionHours, log: log.child({ part: 'vss' }) });
  const outboxJanitor = new OutboxJanitor({ db, retentionDays: config.mail.retentionDays, log: log.child({ part: 'mail' }) });
  const closeTransport = { start() {}, stop: () => transport?.close() };
  return [closeTransport, worker, webhookDispatcher, reconciler, exportJanitor, backupJanitor, vssJanitor, outboxJanitor, ...nodeLogs.parts, monthCloser, storageMeter, vssPendingMeter];
}
