// An account's usage of a month (GET /api/usage, the operator's report): node time summed from
// the recorded status changes (in the database, db/usage.ts sumAccountNodeTime, by node-time.ts's rules), API calls from the flushed counts plus, for the open
// month, what this process has counted and not flushed yet. A closed month is read from its
// snapshot and never computed again.
import type { Queryable } from '../db/database.ts';
import {
  findAccountApiCalls,
  findAccountNodesIn,
  findClosedNodeMonths,
  findNodeNames,
  isMonthClosed,
  sumAccountNodeTime,
  sumAccountTime,
  type ApiCallCountRow,
  type ClosedNodeMonthRow,
} from '../db/usage.ts';
import { DAY_MS, monthRange, wholeSeconds } from './node-time.ts';
import type { SettledTime } from './settled-time.ts';

export interface UsageFigures {
  runningSeconds: number;
  pausedSeconds: number;
  apiCalls: number;
  gatewayCalls: number;
}

export interface NodeUsage extends UsageFigures {
  nodeId: string;
  /** The node's name; its id once its row was purged after destruction. */
  name: string;
}

export interface DayUsage {
  date: string;
  runningSeconds: number;
  pausedSeconds: number;
}

export interface AccountUsage {
  month: string;
  closed: boolean;
  from: string;
  to: string;
  nodes: NodeUsage[];
  total: UsageFigures;
  days: DayUsage[];
}

/** Who spent an account's calls of a month (GET /api/usage): management and gateway calls together. */
export interface CallerUsage {
  members: Array<{ userId: string; email: string | null; calls: number; monthlyApiCalls: number | null }>;
  tokens: Array<{ tokenId: string; name: string | null; userId: string; calls: number; monthlyApiCalls: number | null }>;
}

/** What a reader may see: every node (null) or only some (a token limited to nodes). */
export type VisibleNodes = readonly string[] | null;

/** This process's counts not flushed yet (usage/api-call-meter.ts), for the open month. */
export type UnflushedCalls = (accountId: string) => ApiCallCountRow[];

/** A closed month's snapshot rows, or an open month's figures computed now ('' row: calls about no node). */
export async function accountUsageRows(db: Queryable, accountId: string, month: string, now: Date, unflushed?: UnflushedCalls) {
  const { from } = monthRange(month);
  if (await isMonthClosed(db, from)) return { closed: true, rows: await findClosedNodeMonths(db, from, accountId) };
  return { closed: false, rows: await computeMonthRows(db, accountId, month, now, unflushed) };
}

/** An account's figures of a month computed from the records as they are `now`, each node with its days (a snapshot). */
export async function computeMonthRows(db: Queryable, accountId: string, month: string, now: Date, unflushed?: UnflushedCalls): Promise<ClosedNodeMonthRow[]> {
  const { from, to } = monthRange(month);
  const reads = [
    () => sumAccountNodeTime(db, accountId, from, to, now),
    () => findAccountApiCalls(db, accountId, from),
    () => findAccountNodesIn(db, accountId, from, to),
  ] as const;
  // On the pool the three reads run side by side; a transaction (the month's closing) has one
  // connection, which takes one statement at a time (pg refuses queued ones from its next major).
  const inTransaction = !('transaction' in db);
  const [time, calls, live] = inTransaction
    ? [await reads[0](), await reads[1](), await reads[2]()]
    : await Promise.all([reads[0](), reads[1](), reads[2]()]);
  const dayCount = Math.round((to.getTime() - from.getTime()) / DAY_MS);
  const withDays = time.map((t) => {
    const days: Array<[number, number]> = Array.from({ length: dayCount }, () => [0, 0]);
    for (const [day, running, paused] of t.days) days[day] = [wholeSeconds(running), wholeSeconds(paused)];
    return { ...t, days };
  });
  return assembleRows(db, accountId, withDays, [...calls, ...(unflushed?.(accountId) ?? [])], live);
}

/**
 * GET /api/usage of an open month: the node time per node and per day of the account summed in
 * one query (only `visible` nodes' when limited), so 1,000 nodes cost ~1,000 rows, not one per day.
 */
export async function openMonthUsage(
  db: Queryable,
  accountId: string,
  month: string,
  now: Date,
  visible: VisibleNodes,
  unflushed?: UnflushedCalls,
  settled?: SettledTime,
): Promise<AccountUsage> {
  const { from, to } = monthRange(month);
  const [time, calls, live] = await Promise.all([
    settled ? settled.sum(db, accountId, from, to, now, visible) : sumAccountTime(db, accountId, from, to, now, visible),
    findAccountApiCalls(db, accountId, from),
    findAccountNodesIn(db, accountId, from, to),
  ]);
  const rows = await assembleRows(db, accountId, time.nodes.map((t) => ({ ...t, days: [] })), [...calls, ...(unflushed?.(accountId) ?? [])], live);
  const days = time.days.map((d) => ({ day: d.day, runningSeconds: wholeSeconds(d.running_ms), pausedSeconds: wholeSeconds(d.paused_ms) }));
  return presentAccountUsage(month, false, rows, visible, days);
}

interface NodeTime {
  node_id: string;
  running_ms: number;
  paused_ms: number;
  days: Array<[number, number]>;
}

/** One row per node of the account (and '' for calls about no node) from its time, calls and nodes. */
async function assembleRows(db: Queryable, accountId: string, time: readonly NodeTime[], calls: readonly ApiCallCountRow[], live: readonly { id: string; name: string }[]) {
  const rows = new Map<string, ClosedNodeMonthRow>();
  const rowOf = (nodeId: string) => {
    let row = rows.get(nodeId);
    if (!row) rows.set(nodeId, (row = { account_id: accountId, node_id: nodeId, node_name: null, running_seconds: 0, paused_seconds: 0, api_calls: 0, gateway_calls: 0, days: [] }));
    return row;
  };
  for (const n of live) rowOf(n.id).node_name = n.name;
  const timed = new Set<string>();
  for (const t of time) {
    timed.add(t.node_id);
    const row = rowOf(t.node_id);
    row.running_seconds = wholeSeconds(t.running_ms);
    row.paused_seconds = wholeSeconds(t.paused_ms);
    row.days = t.days;
  }
  for (const c of calls) {
    const row = rowOf(c.node_id);
    if (c.kind === 'api') row.api_calls += c.calls;
    else row.gateway_calls += c.calls;
  }
  const unnamed = [...rows.values()].filter((r) => r.node_id !== '' && r.node_name === null).map((r) => r.node_id);
  if (unnamed.length > 0) for (const n of await findNodeNames(db, accountId, unnamed)) rows.get(n.id)!.node_name = n.name;
  // Management calls are counted under the node id in their path before the route has checked it:
  // an id that is not one of the account's nodes (a typo, another account's node) is named by no
  // row of the account and had no time, so its calls count as calls about no node; the answer
  // never shows an id the account does not own.
  for (const r of [...rows.values()]) {
    if (r.node_id === '' || r.node_name !== null || timed.has(r.node_id)) continue;
    const account = rowOf('');
    account.api_calls += r.api_calls;
    account.gateway_calls += r.gateway_calls;
    rows.delete(r.node_id);
  }
  return [...rows.values()];
}

/** The answer of GET /api/usage from an account's rows, showing only `visible` nodes when limited. */
export function presentAccountUsage(
  month: string,
  closed: boolean,
  rows: readonly ClosedNodeMonthRow[],
  visible: VisibleNodes,
  /** The account's days summed already (an open month); else summed from the rows' days. */
  summedDays?: ReadonlyArray<{ day: number; runningSeconds: number; pausedSeconds: number }>,
): AccountUsage {
  const { from, to } = monthRange(month);
  const dayCount = Math.round((to.getTime() - from.getTime()) / 86_400_000);
  const days: DayUsage[] = Array.from({ length: dayCount }, (_, i) => ({
    date: new Date(from.getTime() + i * 86_400_000).toISOString().slice(0, 10),
    runningSeconds: 0,
    pausedSeconds: 0,
  }));
  const total: UsageFigures = { runningSeconds: 0, pausedSeconds: 0, apiCalls: 0, gatewayCalls: 0 };
  const nodes: NodeUsage[] = [];
  for (const r of rows) {
    // A token limited to nodes sees those nodes only; the account's calls about no node are not
    // about them, so its total leaves them out too.
    if (visible !== null && !visible.includes(r.node_id)) continue;
    total.runningSeconds += r.running_seconds;
    total.pausedSeconds += r.paused_seconds;
    total.apiCalls += r.api_calls;
    total.gatewayCalls += r.gateway_calls;
    if (!summedDays) {
      r.days.forEach(([running, paused], i) => {
        if (!days[i]) return;
        days[i].runningSeconds += running;
        days[i].pausedSeconds += paused;
      });
    }
    if (r.node_id === '') continue;
    nodes.push({
      nodeId: r.node_id,
      name: r.node_name ?? r.node_id,
      runningSeconds: r.running_seconds,
      pausedSeconds: r.paused_seconds,
      apiCalls: r.api_calls,
      gatewayCalls: r.gateway_calls,
    });
  }
  for (const d of summedDays ?? []) {
    const day = days[d.day];
    if (!day) continue;
    day.runningSeconds = d.runningSeconds;
    day.pausedSeconds = d.pausedSeconds;
  }
  return { month, closed, from: from.toISOString(), to: to.toISOString(), nodes, total, days };
}
