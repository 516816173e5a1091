// What backups and restores ask of a node's daemon (RLN's /lock, /backup, /restore). Implemented
// by the RLN client (rln-node-calls.ts) and handed in by the composition root; tests hand in
// daemons that misbehave on purpose.
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
