// One backup of a node, carried out by the replica that accepted it, which alone holds the
// password (in memory, never stored): lock the node if it is unlocked, have the daemon write the
// encrypted file into its own storage, move the file to the backup blob store, and unlock the node
// again if it was unlocked. Whatever happens, the record ends SUCCEEDED or FAILED with the reason
// and an event, and a node that was unlocked is unlocked again unless that unlock itself fails.
// An export's final backup (backups/export.ts) is the one exception: once it is stored the node is
// not unlocked again but EXPORTED, in the transaction that records the backup SUCCEEDED.
import type { Database, Queryable } from '../db/database.ts';
import { markBackupFailed, markBackupSucceeded, touchBackup, type BackupRow } from '../db/backups.ts';
import { findNode, lockNode } from '../db/nodes.ts';
import { recordNodeEvent } from '../db/node-events.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import type { Logger } from '../logger.ts';
import { AppError } from '../errors.ts';
import { backupBlobKey, nodeFileName, storeBackupFile } from './backup-file.ts';
import type { BackupNodeCalls } from './node-calls.ts';
import type { Node } from '../domain/nodes.ts';
import { decide } from '../nodes/lifecycle.ts';
import { applyDecision } from '../nodes/transition.ts';
import type { NodeUnlocker } from '../nodes/unlock/node-unlocker.ts';
import type { NodeService } from '../nodes/service.ts';
import type { AutoUnlockRequests } from '../nodes/unlock/auto-unlock-job.ts';
import type { NodeDaemons } from '../nodes/node-daemons.ts';

export interface BackupRunDeps {
  db: Database;
  blobs: BlobStore;
  runtime: Pick<NodeRuntime, 'storageFiles'>;
  calls: BackupNodeCalls;
  /** Each node's daemon, at its address (nodes/node-daemons.ts). */
  daemons: Pick<NodeDaemons, 'of'>;
  /** Unlocks the node with the password through the service's unlock (chain settings filled in). */
  unlocker: Pick<NodeUnlocker, 'unlockOrRefuse'>;
  /** Records the lock the backup made. */
  nodes: Pick<NodeService, 'markLocked'>;
  /**
   * A node the backup locked could not be unlocked again with the password given: the service
   * unlocks it with the password it keeps, if it keeps one (automatic unlock).
   */
  autoUnlock: Pick<AutoUnlockRequests, 'afterLeftLocked'>;
  dataDir: string;
  log: Logger;
  /** Told of every backup that ended (metrics/); absent: nobody counts. */
  metrics?: BackupMetrics;
}

/** What backups report; implemented by metrics/service-metrics.ts. */
export interface BackupMetrics {
  /** `seconds`: how long the run took; undefined for one the janitor found interrupted. */
  backupFinished(result: 'succeeded' | 'failed', seconds: number | undefined): void;
}

/** How often a running backup says it is alive; the janitor fails one silent for 4 of these. */
export const BACKUP_HEARTBEAT_MS = 5_000;

export async function runBackup(deps: BackupRunDeps, backup: BackupRow, node: Node, password: string, signal: AbortSignal) {
  const log = deps.log.child({ backupId: backup.id, nodeId: node.id });
  const started = performance.now();
  const heartbeat = setInterval(() => {
    touchBackup(deps.db, backup.id).catch((err: unknown) => log.warn({ err }, 'could not renew the backup heartbeat'));
  }, BACKUP_HEARTBEAT_MS);
  // With the service's admin Biscuit (issue #40): /lock and /backup are admin routes.
  const endpoint = await deps.daemons.of(node).authorizedEndpoint();
  const fileName = nodeFileName(backup.id);
  const key = backupBlobKey(backup.id, node.id);
  let outcome: { ok: true; sizeBytes: number; sha256: string } | { ok: false; error: BackupError };
  try {
    if (backup.was_unlocked) {
      await deps.calls.lock(endpoint);
      await deps.nodes.markLocked(node.id);
    }
    signal.throwIfAborted();
    // RLN zips its whole storage directory: client backups an older version kept there would be in this one.
    await deps.runtime.storageFiles.prepareClientBackups(node.id).catch((err: unknown) => log.warn({ err }, 'could not move client backups out of the storage'));
    await deps.calls.backup(endpoint, deps.runtime.storageFiles.daemonPath(node.id, fileName), password);
    signal.throwIfAborted();
    const stored = await storeBackupFile(await deps.runtime.storageFiles.read(node.id, fileName), {
      blobs: deps.blobs,
      key,
      dataDir: deps.dataDir,
      stagingName: backup.id,
    });
    outcome = { ok: true, ...stored };
  } catch (err) {
    outcome = { ok: false, error: asBackupError(err, signal) };
  }
  // The file in the node's storage is only a vehicle: never left behind, success or not.
  await deps.runtime.storageFiles.remove(node.id, fileName).catch((err: unknown) => log.warn({ err }, 'could not remove the backup file from the node'));
  // A stored export leaves the node locked for good: nothing here unlocks its wallet again.
  const exported = backup.for_export && outcome.ok;
  const unlockError = backup.was_unlocked && !exported ? await unlockAgain(deps, node.id, password) : null;
  if (unlockError) {
    await deps.autoUnlock.afterLeftLocked(node.id).catch((err: unknown) => log.warn({ err }, 'could not ask for an automatic unlock'));
  }
  clearInterval(heartbeat);

  const recorded = await deps.db.transaction(async (tx) => {
    if (outcome.ok) {
      const done = await markBackupSucceeded(tx, backup.id, { blobKey: key, sizeBytes: outcome.sizeBytes, sha256: outcome.sha256, unlockError });
      if (done) {
        const facts = { backupId: backup.id, sizeBytes: outcome.sizeBytes, sha256: outcome.sha256 };
        await recordNodeEvent(tx, node, 'NODE_BACKUP_COMPLETED', { ...facts, ...(unlockError ? { unlockError } : {}) });
        if (exported) await markExported(tx, node.id, facts);
      }
      return done;
    }
    const failed = await markBackupFailed(tx, backup.id, { code: outcome.error.code, message: outcome.error.message, unlockError });
    if (failed) {
      await recordNodeEvent(tx, node, 'NODE_BACKUP_FAILED', {
        backupId: backup.id,
        code: outcome.error.code,
        reason: outcome.error.message,
        ...(unlockError ? { unlockError } : {}),
      });
    }
    return failed;
  });
  // Failed by the janitor meanwhile (this replica looked dead): the stored object has no record.
  if (!recorded && outcome.ok) await deps.blobs.deletePrefix(key).catch(() => {});
  const seconds = (performance.now() - started) / 1000;
  // Not recorded: the janitor failed it meanwhile, and counted it.
  if (recorded) deps.metrics?.backupFinished(outcome.ok ? 'succeeded' : 'failed', seconds);
  if (outcome.ok) log.info({ sizeBytes: outcome.sizeBytes, seconds, unlockError }, 'backup finished');
  else log.warn({ code: outcome.error.code, reason: outcome.error.message, seconds, unlockError }, 'backup failed');
}

/** The export's backup is stored: the node becomes EXPORTED (stopped for good by the reconcile loop), with NODE_EXPORTED. */
async function markExported(tx: Queryable, nodeId: string, facts: Record<string, unknown>) {
  const current = await lockNode(tx, nodeId);
  if (!current) return;
  await applyDecision(tx, current, decide({ type: 'exportCompleted' }, current), (after) =>
    after.status === 'EXPORTED' ? [{ node: after, eventType: 'NODE_EXPORTED', details: facts }] : [],
  );
}

/** Unlocks the node again with the backup's password; answers why not when it could not. */
async function unlockAgain(deps: BackupRunDeps, nodeId: string, password: string): Promise<string | null> {
  const node = await findNode(deps.db, nodeId);
  if (!node || node.status !== 'RUNNING') return `the node is ${node?.status ?? 'gone'}, so it could not be unlocked again`;
  try {
    await deps.unlocker.unlockOrRefuse(node, password);
    return null;
  } catch (err) {
    return `the node was locked for the backup and could not be unlocked again: ${(err as Error).message}`;
  }
}

/** Why a backup failed, as its record and event say it: an error code of the API's, or backup_interrupted. */
export interface BackupError {
  code: string;
  message: string;
}

export const INTERRUPTED = 'backup_interrupted';

function asBackupError(err: unknown, signal: AbortSignal): BackupError {
  if (signal.aborted) return { code: INTERRUPTED, message: 'the service stopped during the backup; start another' };
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { code: 'backup_failed', message: `the backup failed: ${(err as Error).message}` };
}
