// Composition of backups: the service that runs them calls the nodes through the gateways'
// connection pool and unlocks them through the same unlock as the gateways, so it is built once
// node access has started.
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import type { RunningNodeAccess } from '../gateway/start-node-access.ts';
import { isSuccess, unlockRefusal } from '../gateway/node-unlocker.ts';
import { BackupService } from '../backups/service.ts';
import type { BackupMetrics } from '../backups/backup-run.ts';
import { backupNodeCalls } from '../gateway/backup-node-calls.ts';
import type { Services } from './services.ts';
import { findNode } from '../db/nodes.ts';
import { enqueueAutoUnlock } from '../nodes/auto-unlock-job.ts';

/** Asks for the automatic unlock of a node a backup left locked; nothing when it has none. */
export async function unlockAutomatically(db: Database, nodeId: string) {
  const node = await findNode(db, nodeId);
  if (node) await enqueueAutoUnlock(db, node);
}

export interface BackupCompositionDeps {
  db: Database;
  config: Config;
  runtime: NodeRuntime;
  services: Pick<Services, 'backupBlobs' | 'nodes'>;
  nodeAccess: Pick<RunningNodeAccess, 'connector' | 'endpointOf' | 'unlocker'>;
  replicaId: string;
  /** Counts the backups this replica runs (metrics/). */
  metrics?: BackupMetrics;
  log: Logger;
}

export function buildBackupService({ db, config, runtime, services, nodeAccess, replicaId, metrics, log }: BackupCompositionDeps) {
  return new BackupService({
    db,
    blobs: services.backupBlobs,
    runtime,
    calls: backupNodeCalls(nodeAccess.connector, config.backups.nodeTimeoutMs),
    endpointOf: nodeAccess.endpointOf,
    async unlock(node, password) {
      const answer = await nodeAccess.unlocker.unlock(node, { password });
      if (!isSuccess(answer.status)) throw unlockRefusal(answer);
    },
    markLocked: (nodeId) => services.nodes.markLocked(nodeId),
    onLeftLocked: (nodeId) => unlockAutomatically(db, nodeId),
    dataDir: config.dataDir,
    config,
    replicaId,
    metrics,
    log,
  });
}
