// Usage as the API, the CLI and the account page ask for it.
import type { Database } from '../db/database.ts';
import { findAccountCallTotals, findClosedNodeMonths, isMonthClosed, listAccountsWithOwners } from '../db/usage.ts';
import { accountUsageRows, openMonthUsage, presentAccountUsage, type AccountUsage, type VisibleNodes } from './account-usage.ts';
import type { ApiCallMeter } from './api-call-meter.ts';
import { SettledTime } from './settled-time.ts';
import { findAccountCreatedAt } from '../db/accounts.ts';
import { AppError } from '../errors.ts';
import { monthOf, monthRange } from './node-time.ts';

export interface UsageReportRow {
  accountId: string;
  ownerEmail: string;
  plan: string;
  /** '' for the account's API calls about no node. */
  nodeId: string;
  runningSeconds: number;
  pausedSeconds: number;
  apiCalls: number;
  gatewayCalls: number;
}

export class UsageService {
  /** The open month's ended days, summed once a day per account (settled-time.ts). */
  private readonly settled = new SettledTime();

  constructor(private readonly deps: { db: Database; meter?: Pick<ApiCallMeter, 'unwrittenCalls'>; now?: () => Date }) {}

  private now() {
    return this.deps.now?.() ?? new Date();
  }

  /** The current month (UTC), `YYYY-MM`. */
  currentMonth() {
    return monthOf(this.now());
  }

  /** Whether `month` (`YYYY-MM`) has begun. */
  hasBegun(month: string) {
    return monthRange(month).from.getTime() <= this.now().getTime();
  }

  /** An account's usage of a month, per node and in total; `visible`: the nodes a token is limited to. */
  async accountUsage(accountId: string, month: string, visible: VisibleNodes = null): Promise<AccountUsage> {
    const { from, to } = monthRange(month);
    // A month that ended before the account existed has no figures, not empty ones: a closed month
    // answered for it would read as a month of no use, closed by a job that never saw the account.
    const createdAt = await findAccountCreatedAt(this.deps.db, accountId);
    if (createdAt && to.getTime() <= createdAt.getTime()) {
      const firstMonth = monthOf(createdAt);
      throw new AppError('invalid_request', `${month} ended before the account was created; its first month is ${firstMonth}`, { firstMonth });
    }
    // The current month cannot be closed (only an ended one is): one query fewer on the common call.
    if (month !== this.currentMonth() && (await isMonthClosed(this.deps.db, from))) return presentAccountUsage(month, true, await findClosedNodeMonths(this.deps.db, from, accountId), visible);
    return openMonthUsage(this.deps.db, accountId, month, this.now(), visible, this.unwritten(month), this.settled);
  }

  /** An account's API calls (management and gateway) this month: every replica's written total plus this process's unwritten. */
  async monthApiCalls(accountId: string): Promise<number> {
    const month = this.currentMonth();
    const [total] = await findAccountCallTotals(this.deps.db, monthRange(month).from, [accountId]);
    const unwritten = this.deps.meter?.unwrittenCalls(accountId) ?? [];
    return (total?.calls ?? 0) + unwritten.reduce((sum, c) => sum + c.calls, 0);
  }

  /** Every account's usage of a month, a row per account and node (the operator's report). */
  async report(month: string): Promise<{ closed: boolean; rows: UsageReportRow[] }> {
    const rows: UsageReportRow[] = [];
    // Closed only when the close job closed it (usage_months_closed), whatever the accounts are.
    const closed = await isMonthClosed(this.deps.db, monthRange(month).from);
    for (const account of await listAccountsWithOwners(this.deps.db)) {
      const usage = await accountUsageRows(this.deps.db, account.id, month, this.now(), this.unwritten(month));
      for (const r of usage.rows) {
        rows.push({
          accountId: account.id,
          ownerEmail: account.email,
          plan: account.plan,
          nodeId: r.node_id,
          runningSeconds: r.running_seconds,
          pausedSeconds: r.paused_seconds,
          apiCalls: r.api_calls,
          gatewayCalls: r.gateway_calls,
        });
      }
    }
    return { closed, rows };
  }

  private unwritten(month: string) {
    return month === this.currentMonth() && this.deps.meter ? (accountId: string) => this.deps.meter!.unwrittenCalls(accountId) : undefined;
  }
}
