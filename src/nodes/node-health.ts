// GET /api/nodes/{id}/health: the control plane's view of a node (status, lock, last build) and
// the daemon's own, asked for there and then: does it answer, how fast, and for an unlocked node
// its chain height (`/networkinfo`). A slow or dead daemon costs the caller at most
// PROBE_TIMEOUT_MS; the answer then says so instead of waiting.
import { buildsByNode } from '../db/builds.ts';
import type { Database } from '../db/database.ts';
import { findUserNode } from '../db/nodes.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { presentBuild, type ApiBuild } from './present.ts';
import { answerJson, type RlnAnswer } from '../rln/answer.ts';
import type { Node } from '../domain/nodes.ts';
import type { NodeDaemons } from './node-daemons.ts';

export const PROBE_TIMEOUT_MS = 1_500;

export interface DaemonHealth {
  /** False when the node is not RUNNING: there is no daemon to ask. */
  checked: boolean;
  /** The daemon answered HTTP at all (a locked RLN answers 403: it is up). */
  answering: boolean;
  latencyMs: number | null;
  httpStatus: number | null;
  /** Why it did not answer: refused, timed out, ... */
  error: string | null;
  /** From `/networkinfo`, for an unlocked node. */
  network: string | null;
  height: number | null;
}

export interface NodeHealthReport {
  nodeId: string;
  status: Node['status'];
  locked: boolean;
  initialized: boolean;
  imageVersion: string;
  lastBuild: ApiBuild | null;
  daemon: DaemonHealth;
  checkedAt: string;
}

export interface NodeHealthDeps {
  db: Database;
  /** Each node's daemon, its RLN calls bound to its address (node-daemons.ts). */
  daemons: Pick<NodeDaemons, 'of'>;
}

export class NodeHealth {
  constructor(private readonly deps: NodeHealthDeps) {}

  async check(userId: string, nodeId: string): Promise<NodeHealthReport> {
    const node = await findUserNode(this.deps.db, userId, nodeId);
    if (!node) throw nodeNotFound(nodeId);
    const [builds, daemon] = await Promise.all([buildsByNode(this.deps.db, [node.id]), this.probe(node)]);
    const last = builds.get(node.id)?.at(-1);
    return {
      nodeId: node.id,
      status: node.status,
      locked: node.locked,
      initialized: node.initialized,
      imageVersion: node.imageVersion,
      lastBuild: last ? presentBuild(last) : null,
      daemon,
      checkedAt: new Date().toISOString(),
    };
  }

  private async probe(node: Node): Promise<DaemonHealth> {
    const none = { latencyMs: null, httpStatus: null, error: null, network: null, height: null };
    if (node.status !== 'RUNNING') return { checked: false, answering: false, ...none };
    // A locked RLN answers only a few routes; /nodeinfo's 403 still proves it is up.
    const daemon = this.deps.daemons.of(node);
    const started = performance.now();
    try {
      const answer = node.locked ? await daemon.nodeInfo(PROBE_TIMEOUT_MS) : await daemon.networkInfo(PROBE_TIMEOUT_MS);
      const latencyMs = Math.round((performance.now() - started) * 10) / 10;
      const info = !node.locked && answer.status === 200 ? parseNetworkInfo(answer) : undefined;
      return { checked: true, answering: true, ...none, latencyMs, httpStatus: answer.status, network: info?.network ?? null, height: info?.height ?? null };
    } catch (err) {
      return { checked: true, answering: false, ...none, error: err instanceof AppError ? err.message : 'the node could not be reached' };
    }
  }
}

function parseNetworkInfo(answer: RlnAnswer): { network: string | null; height: number | null } | undefined {
  const info = answerJson(answer);
  if (!info) return undefined;
  return { network: typeof info.network === 'string' ? info.network : null, height: typeof info.height === 'number' ? info.height : null };
}
