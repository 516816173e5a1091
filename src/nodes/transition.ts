// The one way node state changes: the row is updated and the events a user may care about are
// recorded in the same transaction, in one statement. Callers hold the node's row lock
// (lockNode / lockUserNode).
import type { Queryable } from '../db/database.ts';
import { updateNode, type NodeRow } from '../db/nodes.ts';
import { recordNodeEvents, type NodeEventInput } from '../events/record.ts';

export type NodeChange = Parameters<typeof updateNode>[2];

/** `alsoRecord` adds events that depend on the node after the change (e.g. an upgrade's outcome). */
export async function changeNode(
  tx: Queryable,
  before: NodeRow,
  change: NodeChange,
  alsoRecord?: (after: NodeRow) => NodeEventInput[],
): Promise<NodeRow> {
  const after = (await updateNode(tx, before.id, change))!;
  const events: NodeEventInput[] = [];
  if (after.status !== before.status) {
    events.push({ node: after, eventType: 'NODE_STATUS_UPDATED', details: { status: after.status, previousStatus: before.status } });
  }
  if (after.locked !== before.locked) {
    events.push({ node: after, eventType: after.locked ? 'NODE_LOCKED' : 'NODE_UNLOCKED', details: { locked: after.locked } });
  }
  events.push(...(alsoRecord?.(after) ?? []));
  await recordNodeEvents(tx, events);
  return after;
}
