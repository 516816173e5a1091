// Restoring a backup into a new node, as the last step of its create build: the daemon is up
// (locked, no wallet yet), the backup file is copied into its storage, the daemon's /restore is
// called with the password (kept sealed until now), and the file is removed again. A refusal the
// user must act on (wrong password, corrupt file) ends the restore at once with the node's reason;
// a node that cannot be reached is retried by the build job like any other start failure.
import type { NodeBearers } from '../rln/node-bearer.ts';
import type { Database } from '../db/database.ts';
import { findBackup, untieUploadFromNode } from '../db/backups.ts';
import { findNodeRestore, finishNodeRestore, listSealedRestorePasswords, replaceSealedRestorePassword } from '../db/node-restores.ts';
import type { SealedValueStore } from '../secrets/unlock-seal-keys.ts';
import type { UnlockSeal } from '../secrets/unlock-seal.ts';
import { listSupersededBy, releaseSupersededBy } from '../db/nodes.ts';
import type { NodeEndpoint, NodeRuntime } from '../runtime/types.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { BlobMissingError } from '../blobs/blob-store.ts';
import type { Logger } from '../logger.ts';
import { AppError } from '../errors.ts';
import { nodeFileName, placeBackupFile } from './backup-file.ts';
import type { BackupNodeCalls, NodeRefusal } from './node-calls.ts';
import type { BuildRestorer } from '../nodes/builds/build-job.ts';
import type { Node } from '../domain/nodes.ts';
import type { NodeService } from '../nodes/service.ts';
import { restoreSealContext } from '../nodes/restore/restore-password.ts';

/** Seals secrets under a key outside the database, bound to what they are for (secrets/unlock-seal.ts). */
export type SecretSeal = Pick<UnlockSeal, 'seal' | 'open'>;

/** Restore passwords in flight, re-sealed by a rotation of the seal key (composition/unlock-seal.ts). */
export const RESTORE_PASSWORDS: SealedValueStore = {
  what: 'restore passwords',
  async list(db) {
    const rows = await listSealedRestorePasswords(db);
    return rows.map((r) => ({ id: r.node_id, sealed: r.sealed_password, associatedData: restoreSealContext(r.node_id) }));
  },
  replace: replaceSealedRestorePassword,
};

export interface NodeRestorerDeps {
  db: Database;
  blobs: BlobStore;
  runtime: Pick<NodeRuntime, 'storageFiles' | 'status'>;
  calls: BackupNodeCalls;
  seal: SecretSeal;
  /** Records that the daemon now has a wallet (the node's `initialized`). */
  nodes: Pick<NodeService, 'markInitialized'>;
  /** How long a restore waits for the daemon of the node it supersedes to stop before the build tries again. */
  supersededStopWaitMs: number;
  /** The admin Biscuit /restore carries (issue #40); absent in tests without root keys. */
  bearers?: NodeBearers;
  log: Logger;
}

const STOP_POLL_MS = 250;
// The statuses of a node whose daemon has stopped for good: its stop (or destroy) build completed.
const STOPPED = new Set(['PAUSED', 'DESTROYED']);

export type RestoreOutcome = { restored: boolean } | { failed: string };

export class NodeRestorer implements BuildRestorer {
  constructor(private readonly deps: NodeRestorerDeps) {}

  /**
   * Restores the node's pending backup, if it has one. Answers {restored: false} for a node created
   * without one, {failed: reason} when the restore cannot succeed; throws when it may on a retry.
   */
  async restorePending(node: Node, endpoint: NodeEndpoint, restoring?: () => Promise<void>): Promise<RestoreOutcome> {
    const pending = await findNodeRestore(this.deps.db, node.id);
    if (!pending || pending.status === 'SUCCEEDED') return { restored: pending !== undefined };
    if (pending.status === 'FAILED') return { failed: pending.error ?? 'the restore failed' };
    await restoring?.();
    // Only for a restore the daemon did not carry out: the node it superseded holds the only copy
    // of the wallet again, so its fence is lifted (it stays stopped until its owner starts it).
    const fail = async (reason: string) => {
      await this.deps.db.transaction(async (tx) => {
        await finishNodeRestore(tx, node.id, { status: 'FAILED', error: reason });
        await untieUploadFromNode(tx, pending.backup_id, node.id);
        const released = await releaseSupersededBy(tx, node.id);
        if (released.length > 0) this.deps.log.info({ nodeId: node.id, released: released.map((r) => r.id) }, 'the restore failed: its source node may run again');
      });
      return { failed: reason };
    };
    const backup = await findBackup(this.deps.db, pending.backup_id);
    if (!backup?.blob_key) return fail(`backup ${pending.backup_id} was deleted before it could be restored`);
    let password: string;
    try {
      password = this.deps.seal.open(pending.sealed_password ?? '', restoreSealContext(node.id));
    } catch {
      return fail('the restore password cannot be unsealed (was UNLOCK_SEAL_KEY_FILE replaced?): create the node again');
    }
    await this.awaitSupersededStopped(node.id);
    const files = this.deps.runtime.storageFiles;
    const fileName = nodeFileName(backup.id);
    try {
      await placeBackupFile(this.deps.blobs, backup.blob_key, files, node.id, fileName);
      const authorization = await this.deps.bearers?.authorization(node.id, 'admin');
      await this.deps.calls.restore(authorization === undefined ? endpoint : { ...endpoint, authorization }, files.daemonPath(node.id, fileName), password);
    } catch (err) {
      if (err instanceof BlobMissingError) return fail(`the file of backup ${backup.id} is gone (deleted by retention?)`);
      const refusal = err as NodeRefusal;
      // An earlier attempt restored the wallet but crashed before recording it: the daemon says so.
      if (refusal.details?.nodeError === 'AlreadyInitialized') {
        this.deps.log.warn({ nodeId: node.id }, 'the node already holds a wallet: an earlier attempt restored it');
      } else if (refusal instanceof AppError && refusal.status < 500) {
        // Wrong password, a corrupt or truncated file: trying again cannot help.
        return fail(`the node refused the restore: ${refusal.message}`);
      } else {
        throw err;
      }
    } finally {
      await files.remove(node.id, fileName).catch((err: unknown) => this.deps.log.warn({ err, nodeId: node.id }, 'could not remove the restored backup file'));
    }
    await this.deps.nodes.markInitialized(node.id);
    await finishNodeRestore(this.deps.db, node.id, { status: 'SUCCEEDED' });
    this.deps.log.info({ nodeId: node.id, backupId: backup.id }, 'backup restored into the node');
    return { restored: true };
  }

  /**
   * The node this restore supersedes is stopped by a build of its own, which runs beside this one:
   * the wallet goes into this node only once that daemon is down, never into two live daemons at
   * once (an unlocked daemon runs LDK by itself, gateway or not). Throws, for the build to try
   * again, while it still runs.
   */
  private async awaitSupersededStopped(nodeId: string) {
    const deadline = Date.now() + this.deps.supersededStopWaitMs;
    for (;;) {
      const running = [];
      for (const { id, status } of await listSupersededBy(this.deps.db, nodeId)) {
        // Stopped means its stop build completed (the runtime's stop returns once the process has
        // exited or the pod is gone, on whichever replica ran it) and no daemon runs here either:
        // a runtime alone can say "stopped" while a pod is still terminating, LDK still running.
        if (!STOPPED.has(status) || (await this.deps.runtime.status(id)).state === 'running') running.push(id);
      }
      if (running.length === 0) return;
      if (Date.now() > deadline) throw new Error(`node ${running.join(', ')}, which this restore supersedes, has not stopped yet: its wallet is restored here only once it has`);
      await new Promise((r) => setTimeout(r, STOP_POLL_MS));
    }
  }

  /** The build gave up: the sealed password goes with it. */
  async abandon(nodeId: string, reason: string) {
    await finishNodeRestore(this.deps.db, nodeId, { status: 'FAILED', error: reason });
  }
}
