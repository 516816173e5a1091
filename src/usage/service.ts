// Usage as the API, the CLI and the account page ask for it.
import type { Database } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { setMemberCallCap, setTokenCallCap } from '../db/usage.ts';
import { findAccountCallerCalls, findAccountCallTotals, findCallerNames, findClosedNodeMonths, isMonthClosed, listAccountsWithOwners } from '../db/usage.ts';
import { accountUsageRows, openMonthUsage, presentAccountUsage, type AccountUsage, type CallerUsage, type VisibleNodes } from './account-usage.ts';
import type { ApiCallMeter } from './api-call-meter.ts';
import { SettledTime } from './settled-time.ts';
import { findAccountCreatedAt } from '../db/accounts.ts';
import { sumVssBytes } from '../db/vss.ts';
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

  constructor(private readonly deps: { db: Database; meter?: Pick<ApiCallMeter, 'unwrittenCalls' | 'unwrittenCallerCalls' | 'betweenBatches'>; now?: () => Date }) {}

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
  async accountUsage(accountId: string, month: string, visible: VisibleNodes = null): Promise<AccountUsage & CallerUsage & { vssBytes: number }> {
    const { from, to } = monthRange(month);
    // A month that ended before the account existed has no figures, not empty ones: a closed month
    // answered for it would read as a month of no use, closed by a job that never saw the account.
    const createdAt = await findAccountCreatedAt(this.deps.db, accountId);
    if (createdAt && to.getTime() <= createdAt.getTime()) {
      const firstMonth = monthOf(createdAt);
      throw new AppError('invalid_request', `${month} ended before the account was created; its first month is ${firstMonth}`, { firstMonth });
    }
    // Both read at once; awaited together, so a failure of either is never left unhandled.
    const read = () =>
      Promise.all([
        this.monthFigures(accountId, month, from, visible),
        this.callerUsage(accountId, month, visible),
        // What the stores hold now, whatever the month (docs/VSS.md): a level, not a month's sum.
        sumVssBytes(this.deps.db, accountId, visible),
      ]);
    const [figures, callers, vssBytes] = await this.betweenBatches(month, read);
    return { ...figures, ...callers, vssBytes };
  }

  private async monthFigures(accountId: string, month: string, from: Date, visible: VisibleNodes): Promise<AccountUsage> {
    // The current month cannot be closed (only an ended one is): one query fewer on the common call.
    if (month !== this.currentMonth() && (await isMonthClosed(this.deps.db, from))) return presentAccountUsage(month, true, await findClosedNodeMonths(this.deps.db, from, accountId), visible);
    return openMonthUsage(this.deps.db, accountId, month, this.now(), visible, this.unwritten(month), this.settled);
  }

  /**
   * Who spent the month's calls: per member (tokens and web session together) and per token, the
   * most first. A token limited to some nodes sees none: they are the account's, not those nodes'.
   */
  private async callerUsage(accountId: string, month: string, visible: VisibleNodes): Promise<CallerUsage> {
    if (visible !== null) return { members: [], tokens: [] };
    const rows = await findAccountCallerCalls(this.deps.db, accountId, monthRange(month).from);
    if (month === this.currentMonth()) rows.push(...(this.deps.meter?.unwrittenCallerCalls(accountId) ?? []));
    const members = new Map<string, number>();
    const tokens = new Map<string, { userId: string; calls: number }>();
    for (const r of rows) {
      members.set(r.user_id, (members.get(r.user_id) ?? 0) + r.calls);
      if (r.token_id === '') continue;
      const token = tokens.get(r.token_id) ?? { userId: r.user_id, calls: 0 };
      token.calls += r.calls;
      tokens.set(r.token_id, token);
    }
    const names = await findCallerNames(this.deps.db, [...members.keys()], [...tokens.keys()]);
    return {
      members: [...members]
        .map(([userId, calls]) => ({ userId, email: names.members.get(userId)?.email ?? null, calls, monthlyApiCalls: names.members.get(userId)?.cap ?? null }))
        .sort((a, b) => b.calls - a.calls),
      tokens: [...tokens]
        .map(([tokenId, t]) => ({ tokenId, name: names.tokens.get(tokenId)?.name ?? null, userId: t.userId, calls: t.calls, monthlyApiCalls: names.tokens.get(tokenId)?.cap ?? null }))
        .sort((a, b) => b.calls - a.calls),
    };
  }

  /** Caps a member's calls a month (null: no cap); every replica applies it from its next batch. */
  async capMember(accountId: string, userId: string, cap: number | null) {
    if (!(await setMemberCallCap(this.deps.db, accountId, userId, cap))) throw new AppError('member_not_found', `${userId} is not a member of this account`);
    return { userId, monthlyApiCalls: cap };
  }

  /** Caps a token's calls a month (null: no cap). */
  async capToken(accountId: string, tokenId: string, cap: number | null) {
    if (!(await setTokenCallCap(this.deps.db, accountId, tokenId, cap))) throw new AppError('token_not_found', `API token ${tokenId} is not one of this account's`);
    return { tokenId, monthlyApiCalls: cap };
  }

  /** An account's API calls (management and gateway) this month: every replica's written total plus this process's unwritten. */
  async monthApiCalls(accountId: string): Promise<number> {
    const month = this.currentMonth();
    return this.betweenBatches(month, async () => {
      const [total] = await findAccountCallTotals(this.deps.db, monthRange(month).from, [accountId]);
      const unwritten = this.deps.meter?.unwrittenCalls(accountId) ?? [];
      return (total?.calls ?? 0) + unwritten.reduce((sum, c) => sum + c.calls, 0);
    });
  }

  /** The current month's written and unwritten calls are read together only between the meter's batches. */
  private betweenBatches<T>(month: string, read: () => Promise<T>): Promise<T> {
    return month === this.currentMonth() && this.deps.meter ? this.deps.meter.betweenBatches(read) : read();
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
