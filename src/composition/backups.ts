// Composition of backups: the service that runs them calls the nodes through the RLN client,
// unlocks them through the same unlock as the gateways (composition/node-calls.ts) and asks for
// the automatic unlock of a node it left locked (nodes/unlock/auto-unlock-job.ts).
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import type { NodeCalls } from './node-calls.ts';
import { BackupService } from '../backups/service.ts';
import type { BackupMetrics } from '../backups/backup-run.ts';
import { rlnBackupCalls } from '../backups/rln-node-calls.ts';
import type { Services } from './services.ts';
import { AutoUnlockRequests } from '../nodes/unlock/auto-unlock-job.ts';

export interface BackupCompositionDeps {
  db: Database;
  config: Config;
  runtime: NodeRuntime;
  services: Pick<Services, 'backupBlobs' | 'nodes'>;
  nodeCalls: Pick<NodeCalls, 'rln' | 'daemons' | 'unlocker'>;
  replicaId: string;
  /** Counts the backups this replica runs (metrics/). */
  metrics?: BackupMetrics;
  log: Logger;
}

export function buildBackupService({ db, config, runtime, services, nodeCalls, replicaId, metrics, log }: BackupCompositionDeps) {
  return new BackupService({
    db,
    blobs: services.backupBlobs,
    runtime,
    calls: rlnBackupCalls(nodeCalls.rln, config.backups.nodeTimeoutMs),
    daemons: nodeCalls.daemons,
    unlocker: nodeCalls.unlocker,
    nodes: services.nodes,
    autoUnlock: new AutoUnlockRequests(db),
    dataDir: config.dataDir,
    config,
    replicaId,
    metrics,
    log,
  });
}
