// The node calls backups make (backups/node-calls.ts), over a connection pool to the nodes: lock,
// back up, restore. RLN answers errors as {"error", "code", "name"}; a refusal becomes one of our
// error codes with the node's own words, so a FAILED record says what the node said.
import type { BackupNodeCalls, NodeRefusal } from '../backups/node-calls.ts';
import type { NodeEndpoint } from '../runtime/types.ts';
import type { NodeConnector } from './node-connector.ts';
import { isSuccess, unlockRefusal } from './node-unlocker.ts';

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
