// What each node status means for the account, decided here once: whether the node takes one of
// its plan's node slots, how its time is billed, and whether its lifecycle events go to webhooks.
// A status added later (an exported node, a node whose storage was lost) is decided in this table
// and nowhere else: the plan's counts (db/nodes.ts), node time (usage/node-time.ts, and the status
// changes migration 0027's trigger records) and docs/ACCOUNTS.md follow it.
import type { NodeStatus } from './nodes.ts';

export interface StatusMeaning {
  /** Counts towards the plan's node limit (GET /api/account's nodes.used, a create's refusal). */
  takesPlanSlot: boolean;
  /** Which of the account's node times this status accrues (docs/USAGE.md); null: none. */
  billedAs: 'running' | 'paused' | null;
  /** The node's lifecycle events are delivered to its webhook. */
  webhooks: boolean;
}

// Compile-time complete: a NodeStatus missing here fails the type check.
export const NODE_STATUS_MEANING = {
  STARTING: { takesPlanSlot: true, billedAs: null, webhooks: true },
  RUNNING: { takesPlanSlot: true, billedAs: 'running', webhooks: true },
  IN_PROGRESS: { takesPlanSlot: true, billedAs: null, webhooks: true },
  PAUSED: { takesPlanSlot: true, billedAs: 'paused', webhooks: true },
  FAILED: { takesPlanSlot: true, billedAs: null, webhooks: true },
  // Its volume is gone and nothing runs: no time accrues, but it keeps its slot, since a recover
  // brings it back as the same node (its id, URLs and settings).
  STORAGE_LOST: { takesPlanSlot: true, billedAs: null, webhooks: true },
  // Its wallet left with its owner (the export's final backup): it never runs here again, so it
  // holds no slot and accrues no time; its owner still hears of it (NODE_EXPORTED, a destroy).
  EXPORTED: { takesPlanSlot: false, billedAs: null, webhooks: true },
  // Being destroyed frees the slot at once: the destroy cannot be undone.
  DESTROYING: { takesPlanSlot: false, billedAs: null, webhooks: true },
  DESTROYED: { takesPlanSlot: false, billedAs: null, webhooks: true },
} as const satisfies Record<NodeStatus, StatusMeaning>;

/**
 * A superseded node (its wallet was restored into another node: nodes/lifecycle.ts) never runs
 * again, whatever its status: it takes no slot (the restored node took it over) and accrues no
 * time. Its status changes are recorded as this word (migration 0027), so its time stops the
 * moment it is superseded and starts again if a failed restore releases it.
 */
export const SUPERSEDED = 'SUPERSEDED';
export const SUPERSEDED_MEANING: StatusMeaning = { takesPlanSlot: false, billedAs: null, webhooks: true };

/** The meaning of a status as recorded in node_status_changes (a NodeStatus, or SUPERSEDED). */
export function meaningOf(recorded: string): StatusMeaning | undefined {
  if (recorded === SUPERSEDED) return SUPERSEDED_MEANING;
  return (NODE_STATUS_MEANING as Record<string, StatusMeaning>)[recorded];
}

const statusesWhere = (holds: (m: StatusMeaning) => boolean) =>
  (Object.keys(NODE_STATUS_MEANING) as NodeStatus[]).filter((s) => holds(NODE_STATUS_MEANING[s]));

/** The statuses whose (not superseded) nodes take a plan slot. */
export const SLOT_STATUSES = statusesWhere((m) => m.takesPlanSlot);
/** The statuses (as recorded) billed as running or paused time. */
export const BILLED_STATUSES = statusesWhere((m) => m.billedAs !== null);

/**
 * A node that takes a slot and is meant to run (desiredState running: started, starting, or failed
 * while starting) counts towards the plan's limit on running nodes: an account never runs more
 * nodes than its plan allows, whichever path (start, upgrade, a released superseded node) led there.
 */
export const countsAsRunning = (node: { status: NodeStatus; desiredState: string; supersededBy: string | null }) =>
  node.supersededBy === null && NODE_STATUS_MEANING[node.status].takesPlanSlot && node.desiredState === 'running';
