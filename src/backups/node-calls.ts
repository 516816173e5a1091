// What backups and restores ask of a node's daemon (RLN's /lock, /backup, /restore). Implemented
// by the RLN client (rln-node-calls.ts) and handed in by the composition root; tests hand in
// daemons that misbehave on purpose.
import type { RlnEndpoint } from '../rln/client.ts';
import type { AppError } from '../errors.ts';

/** Endpoints carry the service's admin Biscuit for the node (issue #40), as RlnEndpoint says. */
export interface BackupNodeCalls {
  /** Locks the daemon; one already locked counts as done. */
  lock(endpoint: RlnEndpoint): Promise<void>;
  /** RLN's POST /backup: the daemon writes the encrypted file at `path` on its own disk. */
  backup(endpoint: RlnEndpoint, path: string, password: string): Promise<void>;
  /** RLN's POST /restore: the daemon restores its wallet from the file at `path`. */
  restore(endpoint: RlnEndpoint, path: string, password: string): Promise<void>;
}

/** What a node refusal looks like to callers: an AppError whose details say the node's error name. */
export type NodeRefusal = AppError & { details: { nodeStatus: number; nodeError?: string } };
