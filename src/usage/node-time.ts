// A node's billable time from its recorded status changes (node_status_changes, migration 0021):
// the time between a change to RUNNING (or PAUSED) and the next change counts as running (paused)
// time, as domain/node-status-meaning.ts bills each status (a superseded node's SUPERSEDED: none).
// Pure, so that the month and day boundaries are split exactly and tested without a clock.
import type { NodeStatus } from '../domain/nodes.ts';
import { meaningOf } from '../domain/node-status-meaning.ts';

export interface StatusChange {
  status: NodeStatus | string;
  changedAt: Date;
}

export interface DayTime {
  runningMs: number;
  pausedMs: number;
}

export interface NodeTime extends DayTime {
  /** One entry per UTC day of [from, to), in order. */
  days: DayTime[];
}

export const DAY_MS = 86_400_000;

/**
 * RUNNING and PAUSED time within [from, to). `changes` are the node's changes in order: the last
 * one before `from` (the status the period starts in) and those inside it. The status in force at
 * the end stays in force until min(now, to): an open interval never counts time not yet lived.
 * UTC days are exactly DAY_MS long (no daylight saving), so a day's index is arithmetic.
 */
export function nodeTime(changes: readonly StatusChange[], from: Date, to: Date, now: Date): NodeTime {
  const start = from.getTime();
  const end = Math.min(to.getTime(), now.getTime());
  const days: DayTime[] = Array.from({ length: Math.ceil((to.getTime() - start) / DAY_MS) }, () => ({ runningMs: 0, pausedMs: 0 }));
  const total: DayTime = { runningMs: 0, pausedMs: 0 };
  for (let i = 0; i < changes.length; i++) {
    const billedAs = meaningOf(changes[i]!.status)?.billedAs;
    const key = billedAs === 'running' ? 'runningMs' : billedAs === 'paused' ? 'pausedMs' : undefined;
    if (!key) continue;
    const intervalEnd = Math.min(changes[i + 1]?.changedAt.getTime() ?? end, end);
    let t = Math.max(changes[i]!.changedAt.getTime(), start);
    while (t < intervalEnd) {
      const day = Math.floor((t - start) / DAY_MS);
      const until = Math.min(intervalEnd, start + (day + 1) * DAY_MS);
      days[day]![key] += until - t;
      total[key] += until - t;
      t = until;
    }
  }
  return { ...total, days };
}

/** Whole seconds of a duration; a fraction of a second is not billed. */
export const wholeSeconds = (ms: number) => Math.floor(ms / 1000);

/** The UTC calendar month `YYYY-MM` as [from, to). */
export function monthRange(month: string): { from: Date; to: Date } {
  const [year, m] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(year, m - 1, 1)), to: new Date(Date.UTC(year, m, 1)) };
}

/** `YYYY-MM` of the UTC month `at` falls in. */
export const monthOf = (at: Date) => at.toISOString().slice(0, 7);

/** The month before `month`. */
export const previousMonth = (month: string) => monthOf(new Date(monthRange(month).from.getTime() - 1));

/** `YYYY-MM` with a real month (01-12), years 2000-9999. */
export const MONTH_PATTERN = /^[2-9]\d{3}-(0[1-9]|1[0-2])$/;
