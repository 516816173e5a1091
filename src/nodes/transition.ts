// The one way node state changes: the row is updated and the events a user may care about are
// recorded in the same transaction. Callers hold the node's row lock (lockNode / lockUserNode).
import type { Queryable } from '../db/database.ts';
import { updateNode, type NodeRow } from '../db/nodes.ts';
import { recordNodeEvent } from '../events/record.ts';

export type NodeChange = Parameters<typeof updateNode>[2];

export async function changeNode(tx: Queryable, before: NodeRow, change: NodeChange): Promise<NodeRow> {
  const after = (await updateNode(tx, before.id, change))!;
  if (after.status !== before.status) {
    await recordNodeEvent(tx, after, 'NODE_STATUS_UPDATED', { status: after.status, previousStatus: before.status });
  }
  if (after.locked !== before.locked) {
    await recordNodeEvent(tx, after, after.locked ? 'NODE_LOCKED' : 'NODE_UNLOCKED', { locked: after.locked });
  }
  return after;
}
