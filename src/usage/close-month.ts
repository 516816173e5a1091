// Closing a month: its figures computed once, after every replica's counts of it are flushed, and
// kept (usage_closed_months) so that they never change; the trail records it in the same
// transaction (audit action usage.month_closed: one operator event, and one per account in its own
// trail), which is what a billing system watches to pull a closed month (docs/USAGE.md).
import type { Database } from '../db/database.ts';
import { insertAuditEvent } from '../db/audit-events.ts';
import { findAccountsWithApiCalls, findAccountsWithNodeTime, isMonthClosed, insertClosedNodeMonths, listAccountsWithOwners, markMonthClosed } from '../db/usage.ts';
import type { Logger } from '../logger.ts';
import { computeMonthRows } from './account-usage.ts';
import { monthOf, monthRange, previousMonth } from './node-time.ts';

/**
 * Closes `month` unless it is closed already; answers whether this call closed it. Two replicas
 * may try at once: the second waits on the first's row of usage_months_closed and finds it.
 */
export async function closeMonth(db: Database, month: string): Promise<boolean> {
  const { from, to } = monthRange(month);
  if (await isMonthClosed(db, from)) return false;
  return db.transaction(async (tx) => {
    if (!(await markMonthClosed(tx, from))) return false;
    // Deleted accounts too: their usage records stay, and their month closes like anyone's.
    const accounts = new Set([
      ...(await listAccountsWithOwners(tx)).map((a) => a.id),
      ...(await findAccountsWithApiCalls(tx, from)),
      ...(await findAccountsWithNodeTime(tx, from, to)),
    ]);
    let closedAccounts = 0;
    for (const accountId of accounts) {
      // Computed as at the month's end: an interval still open then is cut there.
      const rows = await computeMonthRows(tx, accountId, month, to);
      const used = rows.filter((r) => r.running_seconds + r.paused_seconds + r.api_calls + r.gateway_calls > 0 || r.node_id !== '');
      if (used.length === 0) continue;
      await insertClosedNodeMonths(tx, from, used);
      closedAccounts++;
      const sum = (key: 'running_seconds' | 'paused_seconds' | 'api_calls' | 'gateway_calls') => used.reduce((s, r) => s + r[key], 0);
      await insertAuditEvent(tx, {
        userId: accountId,
        actor: 'service',
        sourceIp: null,
        action: 'usage.month_closed',
        target: month,
        outcome: 'succeeded',
        details: { month, runningSeconds: sum('running_seconds'), pausedSeconds: sum('paused_seconds'), apiCalls: sum('api_calls'), gatewayCalls: sum('gateway_calls') },
      });
    }
    await insertAuditEvent(tx, { userId: null, actor: 'service', sourceIp: null, action: 'usage.month_closed', target: month, outcome: 'succeeded', details: { month, accounts: closedAccounts } });
    return true;
  });
}

export interface MonthCloserDeps {
  db: Database;
  /** How long after a month ends it is closed: longer than any replica takes to flush its counts. */
  graceMs: number;
  /** How often a replica looks whether the previous month is to be closed. */
  checkIntervalMs: number;
  log: Logger;
  now?: () => Date;
}

/** Every replica runs one; whichever finds the previous month due first closes it, once. */
export class MonthCloser {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: MonthCloserDeps) {}

  start() {
    this.timer = setInterval(() => void this.check(), this.deps.checkIntervalMs);
    this.timer.unref();
    void this.check();
  }

  async stop() {
    clearInterval(this.timer);
    await this.running;
  }

  /** Closes the previous month if it is due and not closed yet. */
  check(): Promise<void> {
    this.running ??= this.closeDue().finally(() => (this.running = undefined));
    return this.running;
  }

  private async closeDue() {
    const now = this.deps.now?.() ?? new Date();
    const month = previousMonth(monthOf(now));
    if (now.getTime() < monthRange(month).to.getTime() + this.deps.graceMs) return;
    try {
      if (await closeMonth(this.deps.db, month)) this.deps.log.info({ month }, 'usage month closed');
    } catch (err) {
      this.deps.log.error({ err, month }, 'could not close the usage month; trying again later');
    }
  }
}
