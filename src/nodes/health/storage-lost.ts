// A node whose volume is gone: seen from the volume itself (the reconcile loop asks the runtime's
// storagePresent every pass for the nodes that should run) or from the daemon (an initialised node
// whose daemon answers an unlock as never initialised: its wallet's files are gone, whatever the
// runtime says; node-unlocker.ts, so the users' unlocks and automatic unlock alike). Not from
// /nodeinfo or /networkinfo: RLN answers those 403 LockedNode with or without a wallet. Either way the node becomes STORAGE_LOST with NODE_STATUS_UPDATED and NODE_STORAGE_LOST
// (webhooks, the event stream), its daemon is stopped, and it waits for its owner's recover
// (POST /api/nodes/{id}/recover: the recover build in build-job.ts gives it a fresh volume).
//
// Never from a pod waiting to be scheduled: that is a busy cluster, not a lost volume
// (runtime/kubernetes/claim-state.ts looks at the claim only).
import type { Database } from '../../db/database.ts';
import { findBuildInProgress } from '../../db/builds.ts';
import { lockNode } from '../../db/nodes.ts';
import { decide } from '../lifecycle.ts';
import { applyDecision } from '../transition.ts';
import type { Node } from '../../domain/nodes.ts';
import { answerJson, type RlnAnswer } from '../../rln/answer.ts';

/** How the loss was seen: `volume`, the runtime found the volume gone; `daemon`, the daemon answered as never initialised. */
export type StorageLossSeenBy = 'volume' | 'daemon';

export interface StorageLoss {
  detectedBy: StorageLossSeenBy;
  /** In words, for the event and the log. */
  reason: string;
}

/**
 * Marks the node STORAGE_LOST if the lifecycle table agrees (not during a build, not once destroyed,
 * exported or superseded): the node row, NODE_STATUS_UPDATED and NODE_STORAGE_LOST in one
 * transaction. Returns the node afterwards when it changed, undefined when it did not.
 */
export async function markStorageLost(db: Database, nodeId: string, loss: StorageLoss): Promise<Node | undefined> {
  return db.transaction(async (tx) => {
    const node = await lockNode(tx, nodeId);
    if (!node) return undefined;
    const decision = decide({ type: 'storageLost' }, node, await findBuildInProgress(tx, nodeId));
    if (decision.outcome !== 'change') return undefined;
    return applyDecision(tx, node, decision, (after) => [{ node: after, eventType: 'NODE_STORAGE_LOST', details: { ...loss } }]);
  });
}

/**
 * Whether the daemon of a node the service knows as initialised answered an unlock as a node without
 * a wallet does (RLN: 403, error name NotInitialized; docs/RLN.md): its files are gone, whatever the
 * runtime says of the volume.
 */
export function daemonForgotWallet(node: Pick<Node, 'initialized'>, answer: RlnAnswer): boolean {
  return node.initialized && answer.status === 403 && answerJson(answer)?.name === 'NotInitialized';
}

export const DAEMON_FORGOT_WALLET = 'the node was initialised, but its daemon answers as never initialised: its storage was lost';
export const VOLUME_GONE = "the node's volume is gone (its storage directory or volume claim was deleted)";
