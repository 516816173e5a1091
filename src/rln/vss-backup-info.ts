// RLN's fork's GET /vssbackupinfo (docs/VSS.md, ../shared/VSS.md), as the service reads it: what
// the daemon knows of its own continuous state. The answer's names are RLN's, snake_case.
import { answerJson, isSuccess, nodeRefusal, type RlnAnswer } from './answer.ts';
import { AppError } from '../errors.ts';

export interface VssBackupInfo {
  /** The store holds the node's state (a key beside the fence). */
  backupExists: boolean;
  /** The version of the channel manager's key in the store; null before it was written. */
  serverVersion: number | null;
  /** The daemon has state it could not write to VSS yet. */
  backupRequired: boolean;
  /** State writes made locally and not yet in VSS (retried before the next write). */
  pendingKvWrites: number;
}

export function parseVssBackupInfo(answer: RlnAnswer): VssBackupInfo {
  if (!isSuccess(answer.status)) throw nodeRefusal(answer, 'tell its VSS state');
  const body = answerJson(answer);
  const pending = body?.pending_kv_writes;
  if (!body || typeof pending !== 'number' || !Number.isInteger(pending) || pending < 0) {
    throw new AppError('node_error', "the node's /vssbackupinfo answer is not what RLN answers");
  }
  return {
    backupExists: body.backup_exists === true,
    serverVersion: typeof body.server_version === 'number' ? body.server_version : null,
    backupRequired: body.backup_required === true,
    pendingKvWrites: pending,
  };
}
