// Composition of backups: the service that runs them calls the nodes through the RLN client and
// unlocks them through the same unlock as the gateways (composition/node-calls.ts).
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import type { NodeCalls } from './node-calls.ts';
import { isSuccess, nodeRefusal } from '../rln/answer.ts';
import { BackupService } from '../backups/service.ts';
import type { BackupMetrics } from '../backups/backup-run.ts';
import { rlnBackupCalls } from '../backups/rln-node-calls.ts';
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
  nodeCalls: Pick<NodeCalls, 'rln' | 'endpointOf' | 'unlocker'>;
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
    endpointOf: nodeCalls.endpointOf,
    async unlock(node, password) {
      const answer = await nodeCalls.unlocker.unlock(node, { password });
      if (!isSuccess(answer.status)) throw nodeRefusal(answer);
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
