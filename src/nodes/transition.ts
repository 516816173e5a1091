// The one way node rows change: the row is updated and the events a user may care about are
// recorded in the same transaction. What may change is the lifecycle table's to say (decide() in
// lifecycle.ts); this module carries its answer out. Callers hold the nodes' row locks
// (lockNode / lockUserNode / lockUpgradeCandidates).
import type { Queryable } from '../db/database.ts';
import { insertNode, updateNode, updateNodes, type NodePatch } from '../db/nodes.ts';
import { recordNodeEvents, type NodeEventInput } from '../db/node-events.ts';
import { refusalError, type Decision } from './lifecycle.ts';
import type { Node } from '../domain/nodes.ts';

export type NodeChange = NodePatch;

/**
 * Carries out what decide() answered: a refusal is thrown as its 409, "no change" changes nothing,
 * a change goes through changeNode. Returns the node as it is afterwards.
 */
export async function applyDecision(
  tx: Queryable,
  before: Node,
  decision: Decision,
  alsoRecord?: (after: Node) => NodeEventInput[],
): Promise<Node> {
  if (decision.outcome === 'refused') throw refusalError(decision.refusal);
  if (decision.outcome === 'no change') return before;
  return changeNode(tx, before, decision.change, alsoRecord);
}

/** What a new node row holds besides what the create rule decides. */
export type NewNodeFields = Pick<Node, 'id' | 'userId' | 'name' | 'network' | 'imageVersion' | 'settings' | 'restPort' | 'peerPort'> &
  Partial<Pick<Node, 'continuousState'>>;

/**
 * Carries out the create rule's answer (decide({ type: 'create' })): the node is inserted as it
 * says, and its first status recorded, with no status before it. Returns the new node.
 */
export async function insertDecidedNode(tx: Queryable, fields: NewNodeFields, decision: Decision): Promise<Node> {
  if (decision.outcome === 'refused') throw refusalError(decision.refusal);
  const { status, desiredState, locked, initialized } = decision.outcome === 'change' ? decision.change : {};
  if (status === undefined || desiredState === undefined) throw new Error('the create rule names the status and desired state of a new node');
  const node = await insertNode(tx, { ...fields, status, desiredState, locked, initialized });
  await recordNodeEvents(tx, [{ node, eventType: 'NODE_STATUS_UPDATED', details: { status: node.status, previousStatus: null } }]);
  return node;
}

/** `alsoRecord` adds events that depend on the node after the change (e.g. an upgrade's outcome). */
export async function changeNode(
  tx: Queryable,
  before: Node,
  change: NodeChange,
  alsoRecord?: (after: Node) => NodeEventInput[],
): Promise<Node> {
  const after = (await updateNode(tx, before.id, change))!;
  await recordNodeEvents(tx, [...eventsOf(before, after), ...(alsoRecord?.(after) ?? [])]);
  return after;
}

/**
 * Changes to many nodes, one statement per distinct change and one for all their events (a rollout
 * pass starts many upgrades at once; a batch of upgrades ends together). `alsoRecord` as for
 * changeNode. Returns the nodes afterwards, in input order.
 */
export async function changeNodes(
  tx: Queryable,
  changes: Array<{ before: Node; change: NodeChange; alsoRecord?: (after: Node) => NodeEventInput[] }>,
): Promise<Node[]> {
  const groups = new Map<string, { change: NodeChange; ids: string[] }>();
  for (const { before, change } of changes) {
    const key = JSON.stringify(change);
    const group = groups.get(key) ?? { change, ids: [] };
    group.ids.push(before.id);
    groups.set(key, group);
  }
  const afterById = new Map<string, Node>();
  for (const { change, ids } of groups.values()) {
    for (const row of await updateNodes(tx, ids, change)) afterById.set(row.id, row);
  }
  const afters = changes.map(({ before }) => afterById.get(before.id)!);
  await recordNodeEvents(
    tx,
    changes.flatMap(({ before, alsoRecord }, i) => [...eventsOf(before, afters[i]!), ...(alsoRecord?.(afters[i]!) ?? [])]),
  );
  return afters;
}

function eventsOf(before: Node, after: Node): NodeEventInput[] {
  const events: NodeEventInput[] = [];
  if (after.status !== before.status) {
    events.push({ node: after, eventType: 'NODE_STATUS_UPDATED', details: { status: after.status, previousStatus: before.status } });
  }
  if (after.locked !== before.locked) {
    events.push({ node: after, eventType: after.locked ? 'NODE_LOCKED' : 'NODE_UNLOCKED', details: { locked: after.locked } });
  }
  return events;
}
