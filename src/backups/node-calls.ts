// The node calls a backup makes, over the gateways' connection pool: lock, back up, restore. RLN
// answers errors as {"error", "code", "name"}; a refusal becomes one of our error codes with the
// node's own words, so a FAILED record says what the node said.
import type { NodeConnector } from '../gateway/node-connector.ts';
import { isSuccess, unlockRefusal } from '../gateway/node-unlocker.ts';
import type { NodeEndpoint } from '../runtime/types.ts';
import type { AppError } from '../errors.ts';

export interface BackupNodeCalls {
  /** Locks the daemon; one already locked counts as done. */
  lock(endpoint: NodeEndpoint): Promise<void>;
  /** RLN's POST /backup: the daemon writes the encrypted file at `path` on its own disk. */
  backup(endpoint: NodeEndpoint, path: string, password: string): Promise<void>;
  /** RLN's POST /restore: the daemon restores its wallet from the file at `path`. */
  restore(endpoint: NodeEndpoint, path: string, password: string): Promise<void>;
}

/** What a node refusal looks like to callers: an AppError whose details say the node's error name. */
export type NodeRefusal = AppError & { details: { nodeStatus: number; nodeError?: string } };

export function backupNodeCalls(connector: NodeConnector, timeoutMs: number): BackupNodeCalls {
  const post = async (endpoint: NodeEndpoint, path: string, body: object, what: string, timeout?: number) => {
    const answer = await connector.call(endpoint, 'POST', path, Buffer.from(JSON.stringify(body)), {}, timeout);
    if (!isSuccess(answer.status)) throw unlockRefusal(answer, what);
    return answer;
  };
  return {
    async lock(endpoint) {
      try {
        await post(endpoint, '/lock', {}, 'lock');
      } catch (err) {
        // Locked already (by its owner a moment ago): what we wanted.
        if ((err as NodeRefusal).details?.nodeError === 'LockedNode') return;
        throw err;
      }
    },
    async backup(endpoint, path, password) {
      await post(endpoint, '/backup', { backup_path: path, password }, 'back up', timeoutMs);
    },
    async restore(endpoint, path, password) {
      await post(endpoint, '/restore', { backup_path: path, password }, 'restore', timeoutMs);
    },
  };
}
