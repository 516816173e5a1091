// The node time of an open month's ended days, remembered per replica. A day that has ended never
// changes: status changes are recorded as they happen (migration 0021's trigger, at the time of
// their transaction), and an interval still open is cut at the day's end either way. So GET
// /api/usage sums the records of the ended days once a day per account and reader, and on every
// call only the intervals reaching into today: for an account of 1,000 nodes a few hundred rows
// instead of ~34,000 day parts. The one record that could still land in an ended day is a status
// change whose transaction began before midnight and committed after it (milliseconds); it is
// counted from the next day's first call, and in the month's snapshot when the month closes.
import type { Queryable } from '../db/database.ts';
import { sumAccountTime, type AccountTimeTotals } from '../db/usage.ts';
import { DAY_MS } from './node-time.ts';

/** Enough for every account that opens its usage within a day on a busy replica; the oldest go first. */
const REMEMBERED = 2_000;

export class SettledTime {
  private readonly remembered = new Map<string, AccountTimeTotals>();

  /**
   * The account's time within the month [from, to) up to `now`, per node and per day index: the
   * ended days from memory (read once), today's part from the records.
   */
  async sum(db: Queryable, accountId: string, from: Date, to: Date, now: Date, visible: readonly string[] | null): Promise<AccountTimeTotals> {
    const until = new Date(Math.min(now.getTime(), to.getTime()));
    const today = new Date(Math.floor((until.getTime() - 1) / DAY_MS) * DAY_MS);
    if (today.getTime() <= from.getTime()) return sumAccountTime(db, accountId, from, to, until, visible);
    const [settled, current] = await Promise.all([this.settled(db, accountId, from, to, today, visible), sumAccountTime(db, accountId, today, to, until, visible)]);
    return addTotals(settled, current, Math.round((today.getTime() - from.getTime()) / DAY_MS));
  }

  private async settled(db: Queryable, accountId: string, from: Date, to: Date, today: Date, visible: readonly string[] | null) {
    const key = `${accountId}|${from.getTime()}|${today.getTime()}|${visible === null ? '*' : [...visible].sort().join(',')}`;
    const known = this.remembered.get(key);
    if (known) return known;
    const totals = await sumAccountTime(db, accountId, from, to, today, visible);
    if (this.remembered.size >= REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(key, totals);
    return totals;
  }
}

/** The ended days' totals plus today's, whose day indexes start at `todayIndex` of the month. */
export function addTotals(settled: AccountTimeTotals, current: AccountTimeTotals, todayIndex: number): AccountTimeTotals {
  const nodes = new Map(settled.nodes.map((n) => [n.node_id, { ...n }]));
  for (const n of current.nodes) {
    const known = nodes.get(n.node_id);
    if (known) {
      known.running_ms += n.running_ms;
      known.paused_ms += n.paused_ms;
    } else nodes.set(n.node_id, { ...n });
  }
  const days = [...settled.days, ...current.days.map((d) => ({ ...d, day: d.day + todayIndex }))];
  return { nodes: [...nodes.values()], days };
}
