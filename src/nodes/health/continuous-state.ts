// GET /api/nodes/{id}/continuous-state (issue #43, point 4): what the node page shows of a node's
// continuous state. Time and size come from the service's own store (db/vss-state.ts): they are
// facts there, whatever the daemon is doing. Pending writes only the daemon knows: its
// /vssbackupinfo, asked there and then when it can answer (running, unlocked, writing to VSS),
// within PROBE_TIMEOUT_MS; each answer is also kept as the node's latest sample for the alert.
import type { Database } from '../../db/database.ts';
import { findUserNode } from '../../db/nodes.ts';
import { readVssStoreFacts, recordVssPendingWrites } from '../../db/vss-state.ts';
import { AppError, nodeNotFound } from '../../errors.ts';
import type { Node } from '../../domain/nodes.ts';
import type { NodeDaemons } from '../node-daemons.ts';
import { PROBE_TIMEOUT_MS } from './node-health.ts';

export interface ContinuousStateDaemon {
  /** Whether the daemon was asked: only a RUNNING, unlocked node with continuous state can answer. */
  checked: boolean;
  /** Why it was not asked, or why its answer is missing. */
  reason: string | null;
  pendingWrites: number | null;
  backupRequired: boolean | null;
  backupExists: boolean | null;
}

export interface ContinuousStateReport {
  nodeId: string;
  /** The node's continuousState setting. */
  enabled: boolean;
  /** The node's store in the service; null before it has one. */
  store: { bound: boolean; lastWriteAt: string | null; bytes: number; keys: number } | null;
  daemon: ContinuousStateDaemon;
  checkedAt: string;
}

export interface ContinuousStateDeps {
  db: Database;
  daemons: Pick<NodeDaemons, 'of'>;
}

/** Why a node's daemon cannot tell its continuous state now; undefined when it can. */
export function whyNotAsked(node: Pick<Node, 'status' | 'locked' | 'continuousState'>): string | undefined {
  if (!node.continuousState) return 'the node does not write its state to VSS';
  if (node.status !== 'RUNNING') return 'the node is not running';
  if (node.locked) return 'the node is locked: its daemon tells its VSS state once unlocked';
  return undefined;
}

export class ContinuousStateView {
  constructor(private readonly deps: ContinuousStateDeps) {}

  async read(accountId: string, nodeId: string): Promise<ContinuousStateReport> {
    const node = await findUserNode(this.deps.db, accountId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    const [facts, daemon] = await Promise.all([readVssStoreFacts(this.deps.db, node.id), this.ask(node)]);
    return {
      nodeId: node.id,
      enabled: node.continuousState,
      store: facts ? { bound: facts.bound, lastWriteAt: facts.lastWriteAt?.toISOString() ?? null, bytes: facts.bytes, keys: facts.keys } : null,
      daemon,
      checkedAt: new Date().toISOString(),
    };
  }

  private async ask(node: Node): Promise<ContinuousStateDaemon> {
    const none = { pendingWrites: null, backupRequired: null, backupExists: null };
    const why = whyNotAsked(node);
    if (why) return { checked: false, reason: why, ...none };
    try {
      const info = await this.deps.daemons.of(node).vssBackupInfo(PROBE_TIMEOUT_MS);
      await recordVssPendingWrites(this.deps.db, node.id, info.pendingKvWrites);
      return { checked: true, reason: null, pendingWrites: info.pendingKvWrites, backupRequired: info.backupRequired, backupExists: info.backupExists };
    } catch (err) {
      return { checked: true, reason: err instanceof AppError ? err.message : 'the node could not be reached', ...none };
    }
  }
}
