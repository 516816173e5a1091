// The node calls backups make (node-calls.ts) through the RLN client: lock, back up, restore, the
// last two with the backups' own timeout (a daemon zips or unzips its whole storage meanwhile).
import type { RlnClient } from '../rln/client.ts';
import type { BackupNodeCalls } from './node-calls.ts';

export function rlnBackupCalls(rln: Pick<RlnClient, 'lock' | 'backup' | 'restore'>, timeoutMs: number): BackupNodeCalls {
  return {
    lock: (endpoint) => rln.lock(endpoint),
    backup: (endpoint, path, password) => rln.backup(endpoint, path, password, timeoutMs),
    restore: (endpoint, path, password) => rln.restore(endpoint, path, password, timeoutMs),
  };
}
