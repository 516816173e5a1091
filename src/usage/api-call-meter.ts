// Counts API calls (management API and gateways) per account, node and kind for the calendar month
// (UTC), in memory, and adds them to the database in batches (db/usage.ts addApiCalls): no request
// writes to the database. Each batch answers the accounts' exact totals of every replica, which is
// what the monthly quota (the plan's api_calls_per_month) is checked against.
//
// The bound on overshooting a limit (docs/USAGE.md "How far a limit can be overshot"): for an
// account with a limit, a replica never holds more than `batchSize` calls not yet added to the
// database (counted or in a batch being written); a request that would pass that waits for the
// batch. Once the database total reaches the limit, every replica refuses after its next batch or
// read, so with N replicas serving an account at once the calls admitted in a month are at most
// limit + N × batchSize - 1 (plus batchSize per replica that crashed with counts it never wrote).
// The first call of an account in a process reads its total first: a restart admits nothing blind.
//
// No input breaks it (issue #37): a node id that is not one (wrong shape here, not the account's
// node in the batch's statement) counts under '' (no node), and a batch the database refuses for
// its data is split until the one increment it cannot take is found and dropped, logged once; only
// an unreachable database keeps counts for the next batch.
import type { Database } from '../db/database.ts';
import { addApiCalls, findAccountCallTotals, findCallerTotals, type AccountCallTotal, type CallerCallTotal, type ApiCallCountRow, type ApiCallerCountRow, type ApiCallIncrement } from '../db/usage.ts';
import { isId } from '../auth/tokens.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { rateLimitHeaders } from '../http/rate-limit.ts';
import { monthOf, monthRange } from './node-time.ts';

export type CallKind = 'api' | 'gateway';

/** Who made a call (GET /api/usage shows calls per member and per token): tokenId '' for a web session. */
export interface Caller {
  userId: string;
  tokenId: string;
}

const NO_CALLER: Caller = { userId: '', tokenId: '' };

/** What the meter reports (metrics/ implements it): calls written, by plan and kind, never by account. */
export interface ApiCallMetrics {
  apiCallsCounted(plan: string, kind: CallKind, calls: number): void;
}

export interface ApiCallMeterDeps {
  db: Database;
  /** How often every count is written (USAGE_FLUSH_INTERVAL_MS). */
  flushIntervalMs: number;
  /** Calls of one account a replica may hold unwritten (USAGE_FLUSH_BATCH): the overshoot bound's unit. */
  batchSize: number;
  log: Logger;
  metrics?: ApiCallMetrics;
  /**
   * Told when a batch's answered total shows an account at 80% or 100% of its month's limit, at
   * most once per account, month and threshold in this process (notifications/ makes it once
   * across replicas). Off the requests' path: it runs after the batch, and may write.
   */
  notifications?: { notifyApiCalls(t: { accountId: string; month: string; calls: number; limit: number; percent: 80 | 100 }): Promise<void> };
  now?: () => number;
}

interface AccountCount {
  /** Every replica's written total, as the last batch or read answered it. */
  known: number;
  /** null: unlimited; undefined: not read yet. */
  limit: number | null | undefined;
  plan: string | undefined;
  /** Counted here, not in a batch yet, by `kind/userId/tokenId/nodeId` (countKey). */
  pending: Map<string, number>;
  pendingCalls: number;
  /** In a batch being written. */
  writing: number;
  /** The first read of the account's total, while it runs. */
  reading?: Promise<void>;
  /** The highest share of its limit (80, 100) the notifications were told of this month; 0: none. */
  noticed: 0 | 80 | 100;
  /** Its members ('user:<id>') and tokens ('token:<id>') that called this month, for their caps. */
  callers: Map<string, CallerCount>;
}

/** A member's or token's month, kept like the account's (the same bound holds for its cap). */
interface CallerCount {
  known: number;
  /** The cap; null: none; undefined: not read yet. */
  limit: number | null | undefined;
  /** Counted here and not written yet (pending or in a batch being written). */
  unwritten: number;
  reading?: Promise<void>;
}

interface MonthCounts {
  month: string;
  from: Date;
  /** Epoch ms where the month ends: the meter rolls over at the first call past it. */
  endsAt: number;
  accounts: Map<string, AccountCount>;
}

// The node goes last: the kind and the caller's ids never hold the separator (an id that would is
// dropped), so the key splits at its first three.
const idPart = (id: string) => (id.includes('/') ? '' : id);
const countKey = (nodeId: string, kind: CallKind, caller: Caller) => `${kind}/${idPart(caller.userId)}/${idPart(caller.tokenId)}/${nodeId}`;
const keyParts = (key: string) => {
  const [kind, userId, tokenId] = key.split('/', 3) as [CallKind, string, string];
  return { kind, userId, tokenId, nodeId: key.slice(kind.length + userId.length + tokenId.length + 3) };
};

// The database refused the data itself (SQLSTATE classes 22 data exception, 23 integrity
// constraint violation, 21 cardinality): writing it again cannot succeed.
const refusesData = (err: unknown) => /^2[123]/.test(String((err as { code?: unknown }).code ?? ''));

export class ApiCallMeter {
  private current: MonthCounts;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  private readonly now: () => number;

  constructor(private readonly deps: ApiCallMeterDeps) {
    this.now = deps.now ?? Date.now;
    this.current = this.monthCounts(this.now());
  }

  start() {
    this.timer = setInterval(() => void this.flush(), this.deps.flushIntervalMs);
    this.timer.unref();
  }

  /** Writes what is counted; called on shutdown after the listeners have stopped taking requests. */
  async stop() {
    clearInterval(this.timer);
    await this.flush();
  }

  /**
   * Counts a call of `accountId` (about `nodeId`, '' for none), or throws 429 quota_exceeded past
   * the account's monthly limit (a refused call is not counted). Synchronous in the common case
   * (a Map increment); a promise only while the account's first total is read or a batch it must
   * wait for is written.
   */
  admit(accountId: string, nodeId: string, kind: CallKind, caller: Caller = NO_CALLER, databaseDown = false): void | Promise<void> {
    // Whatever a path held, only a node id's shape is kept (the batch keeps only the account's nodes).
    if (nodeId !== '' && !isId(nodeId)) nodeId = '';
    const account = this.accountOf(accountId);
    if (account.reading) return account.reading.then(() => this.admit(accountId, nodeId, kind, caller));
    const callers = this.callersOf(account, accountId, caller);
    const reading = callers.find((c) => c.reading);
    if (reading) return reading.reading!.then(() => this.admit(accountId, nodeId, kind, caller, databaseDown));
    const unwritten = account.pendingCalls + account.writing;
    // A capped member or token is held to the bound as a limited account is (docs/USAGE.md).
    const capped = callers.some((c) => typeof c.limit === 'number');
    if (account.limit !== null || capped) {
      if (account.limit !== undefined && account.limit !== null && account.known + unwritten >= account.limit) throw this.quotaExceeded(account.limit);
      for (const [key, c] of callers.entries()) {
        if (typeof c.limit === 'number' && c.known + c.unwritten >= c.limit) throw this.capExceeded(key === 0 ? 'member' : 'token', c.limit);
      }
      // Decided again after the batch: many calls may have waited for it, and only B of them fit.
      // With the database unreachable no batch can be written, and calls are admitted (and kept
      // counted) rather than held; the bound holds while the database answers.
      if (unwritten >= this.deps.batchSize && !databaseDown) return this.flush().then((written) => this.admit(accountId, nodeId, kind, caller, !written));
    }
    this.add(account, nodeId, kind, caller);
  }

  /**
   * Counts a call the quota never refuses (api/quota-routes.ts: an owner's or admin's way out of a
   * spent month): never waits, never throws. Such calls may take a replica past B unwritten calls;
   * they only make the account's other calls refused sooner, so the bound on admitted calls holds.
   */
  count(accountId: string, nodeId: string, kind: CallKind, caller: Caller = NO_CALLER): void {
    if (nodeId !== '' && !isId(nodeId)) nodeId = '';
    this.add(this.accountOf(accountId), nodeId, kind, caller);
  }

  private accountOf(accountId: string): AccountCount {
    if (this.now() >= this.current.endsAt) this.rollOver();
    const counts = this.current;
    let account = counts.accounts.get(accountId);
    if (!account) {
      account = { known: 0, limit: undefined, plan: undefined, pending: new Map(), pendingCalls: 0, writing: 0, callers: new Map(), noticed: 0 };
      counts.accounts.set(accountId, account);
      account.reading = this.readTotals(counts, [accountId]);
    }
    return account;
  }

  /** The caller's member and token counts (none without a caller), each read at its first call. */
  private callersOf(account: AccountCount, accountId: string, caller: Caller): CallerCount[] {
    if (caller.userId === '') return [];
    const keys = [`user:${caller.userId}`, ...(caller.tokenId === '' ? [] : [`token:${caller.tokenId}`])];
    const missing = keys.filter((k) => !account.callers.has(k));
    const counts = this.current;
    if (missing.length > 0) {
      const fresh = missing.map((k) => {
        const c: CallerCount = { known: 0, limit: undefined, unwritten: 0 };
        account.callers.set(k, c);
        return c;
      });
      const reading = this.readCallerTotals(counts, accountId, caller).finally(() => {
        for (const c of fresh) delete c.reading;
      });
      for (const c of fresh) c.reading = reading;
    }
    return keys.map((k) => account.callers.get(k)!);
  }

  private async readCallerTotals(counts: MonthCounts, accountId: string, caller: Caller) {
    try {
      this.learnCallers(counts, await findCallerTotals(this.deps.db, counts.from, accountId, caller.userId, caller.tokenId));
    } catch (err) {
      // Uncapped until a batch answers: a cap is a share of the account's limit, which still holds.
      this.deps.log.error({ err }, 'could not read a member\'s or token\'s API call total');
    }
    const account = counts.accounts.get(accountId);
    for (const key of [`user:${caller.userId}`, `token:${caller.tokenId}`]) {
      const c = account?.callers.get(key);
      if (c && c.limit === undefined) c.limit = null;
    }
  }

  /** The increments' calls are no longer its callers' unwritten ones (written, or dropped). */
  private written(counts: MonthCounts, increments: readonly ApiCallIncrement[]) {
    for (const i of increments) {
      if (i.userId === '') continue;
      const callers = counts.accounts.get(i.accountId)?.callers;
      for (const key of [`user:${i.userId}`, `token:${i.tokenId}`]) {
        const c = callers?.get(key);
        if (c) c.unwritten = Math.max(0, c.unwritten - i.calls);
      }
    }
  }

  private learnCallers(counts: MonthCounts, totals: readonly CallerCallTotal[]) {
    for (const t of totals) {
      const c = counts.accounts.get(t.accountId)?.callers.get(t.caller);
      if (!c) continue;
      c.known = Math.max(c.known, t.calls);
      c.limit = t.limit;
    }
  }

  private add(account: AccountCount, nodeId: string, kind: CallKind, caller: Caller) {
    if (caller.userId !== '') {
      for (const key of [`user:${caller.userId}`, `token:${caller.tokenId}`]) {
        const c = account.callers.get(key);
        if (c) c.unwritten++;
      }
    }
    const key = countKey(nodeId, kind, caller);
    account.pending.set(key, (account.pending.get(key) ?? 0) + 1);
    account.pendingCalls++;
    // For a limited account, half a batch starts a write early, so that a busy account rarely waits
    // for one; an unlimited one waits for the interval (no bound to keep, one write a second).
    if (account.pendingCalls * 2 === this.deps.batchSize && (account.limit !== null || [...account.callers.values()].some((c) => typeof c.limit === 'number'))) void this.flush();
  }

  /** This process's counts of the account for the month not written yet (GET /api/usage adds them). */
  unwrittenCalls(accountId: string): ApiCallCountRow[] {
    const byNode = new Map<string, ApiCallCountRow>();
    for (const [key, calls] of this.current.accounts.get(accountId)?.pending ?? []) {
      const { nodeId, kind } = keyParts(key);
      const row = byNode.get(`${kind}/${nodeId}`);
      if (row) row.calls += calls;
      else byNode.set(`${kind}/${nodeId}`, { node_id: nodeId, kind, calls });
    }
    return [...byNode.values()];
  }

  /** The same by member and token (GET /api/usage's members and tokens). */
  unwrittenCallerCalls(accountId: string): ApiCallerCountRow[] {
    const byCaller = new Map<string, ApiCallerCountRow>();
    for (const [key, calls] of this.current.accounts.get(accountId)?.pending ?? []) {
      const { userId, tokenId } = keyParts(key);
      if (userId === '') continue;
      const row = byCaller.get(`${userId}/${tokenId}`);
      if (row) row.calls += calls;
      else byCaller.set(`${userId}/${tokenId}`, { user_id: userId, token_id: tokenId, calls });
    }
    return [...byCaller.values()];
  }

  /** Writes every pending count in one batch; one batch at a time, the next one right after. False: the database refused it. */
  flush(): Promise<boolean> {
    const previous = this.flushing ?? Promise.resolve(true);
    const next = previous.then(() => this.writeBatch(this.current));
    this.flushing = next.finally(() => {
      if (this.flushing === settled) this.flushing = undefined;
    });
    const settled = this.flushing;
    return next;
  }

  /**
   * Runs `read` (of the database's totals and this process's unwritten calls) between batches, never
   * beside one: a batch takes this process's counts out of `unwrittenCalls` before the database
   * has them, so a total read beside it would miss them (GET /api/account's count read low under
   * load). The next batch waits for the read, a few milliseconds.
   */
  betweenBatches<T>(read: () => Promise<T>): Promise<T> {
    const previous = this.flushing ?? Promise.resolve(true);
    const result = previous.then(read);
    // The queue's own promise never rejects: a failed read must not stop the batches after it.
    this.flushing = result.then(
      () => true,
      () => true,
    ).finally(() => {
      if (this.flushing === settled) this.flushing = undefined;
    });
    const settled = this.flushing;
    return result;
  }

  private async writeBatch(counts: MonthCounts): Promise<boolean> {
    const increments: ApiCallIncrement[] = [];
    const refused: string[] = [];
    const refusedCallers: Array<{ accountId: string; caller: Caller }> = [];
    for (const [accountId, account] of counts.accounts) {
      // A refused member or token is read again each time, so a raised cap admits it.
      for (const [key, c] of account.callers) {
        if (key.startsWith('user:') && typeof c.limit === 'number' && c.known >= c.limit) refusedCallers.push({ accountId, caller: { userId: key.slice(5), tokenId: '' } });
        if (key.startsWith('token:') && typeof c.limit === 'number' && c.known >= c.limit) refusedCallers.push({ accountId, caller: { userId: '', tokenId: key.slice(6) } });
      }
      if (account.pendingCalls === 0) {
        // A refused account is read again each time, so a new month's plan or an upgrade admits it.
        if (account.limit !== undefined && account.limit !== null && account.known >= account.limit) refused.push(accountId);
        continue;
      }
      for (const [key, calls] of account.pending) {
        const { nodeId, kind, userId, tokenId } = keyParts(key);
        increments.push({ accountId, nodeId, kind, userId, tokenId, calls });
      }
      account.writing += account.pendingCalls;
      account.pending = new Map();
      account.pendingCalls = 0;
    }
    // Every batch locks rows in one order: two replicas' batches cannot deadlock.
    const order = (i: ApiCallIncrement) => [i.accountId, i.nodeId, i.kind, i.userId, i.tokenId];
    increments.sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      const at = x.findIndex((v, n) => v !== y[n]);
      return at < 0 ? 0 : x[at]! < y[at]! ? -1 : 1;
    });
    try {
      const kept = await this.writeIncrements(counts, increments);
      if (kept.length > 0) {
        for (const i of kept) {
          const account = counts.accounts.get(i.accountId)!;
          const key = countKey(i.nodeId, i.kind, i);
          account.pending.set(key, (account.pending.get(key) ?? 0) + i.calls);
          account.pendingCalls += i.calls;
        }
        this.settled(counts, kept);
        return false;
      }
      if (refused.length > 0) this.learn(counts, await findAccountCallTotals(this.deps.db, counts.from, refused));
      for (const r of refusedCallers) this.learnCallers(counts, await findCallerTotals(this.deps.db, counts.from, r.accountId, r.caller.userId, r.caller.tokenId));
      return true;
    } catch (err) {
      this.deps.log.error({ err }, 'could not read the refused accounts\' API call totals');
      return false;
    }
  }

  /**
   * The increments' calls are no longer being written: in the database's total (learnt in the same
   * step), dropped, or pending again. Never later than that step: a call counted both in `known`
   * and in `writing` would make admit refuse one call early, and the next call (after the batch)
   * would then be admitted past a refusal.
   */
  private settled(counts: MonthCounts, increments: readonly ApiCallIncrement[]) {
    for (const i of increments) counts.accounts.get(i.accountId)!.writing -= i.calls;
  }

  /**
   * Adds the increments; answers those to keep for the next batch (the database could not be
   * reached). A batch refused for its data is split in halves, so the others are written and the
   * increment it cannot take, alone, is dropped: kept, it would fail every batch after it.
   */
  private async writeIncrements(counts: MonthCounts, increments: readonly ApiCallIncrement[]): Promise<readonly ApiCallIncrement[]> {
    if (increments.length === 0) return [];
    let totals: Awaited<ReturnType<typeof addApiCalls>>;
    try {
      totals = await addApiCalls(this.deps.db, counts.from, increments);
    } catch (err) {
      if (!refusesData(err)) {
        this.deps.log.error({ err, calls: increments.length }, 'could not write API call counts; keeping them for the next batch');
        return increments;
      }
      if (increments.length === 1) {
        const [i] = increments;
        this.deps.log.warn({ err, accountId: i!.accountId, kind: i!.kind, calls: i!.calls }, 'the database refused an API call count; dropped');
        this.settled(counts, increments);
        this.written(counts, increments);
        return [];
      }
      const half = Math.ceil(increments.length / 2);
      const kept = await this.writeIncrements(counts, increments.slice(0, half));
      return [...kept, ...(await this.writeIncrements(counts, increments.slice(half)))];
    }
    this.learn(counts, totals.accounts);
    this.settled(counts, increments);
    this.learnCallers(counts, totals.callers);
    this.written(counts, increments);
    this.report(totals.accounts, increments);
    this.noticeThresholds(counts, totals.accounts);
    return [];
  }

  /** Tells the notifications of accounts whose written total reached 80% or 100% of their limit since it last did. */
  private noticeThresholds(counts: MonthCounts, totals: readonly AccountCallTotal[]) {
    const notifications = this.deps.notifications;
    if (!notifications) return;
    for (const t of totals) {
      const account = counts.accounts.get(t.accountId);
      if (!account || t.limit === null || t.limit === undefined || t.limit <= 0) continue;
      const percent = t.calls >= t.limit ? 100 : t.calls * 5 >= t.limit * 4 ? 80 : 0;
      if (percent === 0 || percent <= account.noticed) continue;
      const before = account.noticed;
      account.noticed = percent;
      notifications.notifyApiCalls({ accountId: t.accountId, month: counts.month, calls: t.calls, limit: t.limit, percent }).catch((err: unknown) => {
        // Told again after the next batch: the notice's key keeps it to one email.
        if (account.noticed === percent) account.noticed = before;
        this.deps.log.error({ err, accountId: t.accountId, percent }, 'could not write the API call notice');
      });
    }
  }

  private learn(counts: MonthCounts, totals: readonly AccountCallTotal[]) {
    for (const t of totals) {
      const account = counts.accounts.get(t.accountId);
      if (!account) continue;
      account.known = Math.max(account.known, t.calls);
      account.limit = t.plan === undefined ? null : t.limit;
      account.plan = t.plan;
    }
  }

  private report(totals: readonly AccountCallTotal[], increments: readonly ApiCallIncrement[]) {
    if (!this.deps.metrics) return;
    const planOf = new Map(totals.map((t) => [t.accountId, t.plan ?? 'none']));
    for (const i of increments) this.deps.metrics.apiCallsCounted(planOf.get(i.accountId) ?? 'none', i.kind, i.calls);
  }

  private async readTotals(counts: MonthCounts, accountIds: string[]) {
    try {
      const totals = await findAccountCallTotals(this.deps.db, counts.from, accountIds);
      this.learn(counts, totals);
      // An account the database does not know (removed meanwhile) has no plan to limit it.
      for (const id of accountIds) if (!totals.some((t) => t.accountId === id)) counts.accounts.get(id)!.limit = null;
    } catch (err) {
      // Counted from 0 with its limit unknown: the batch answers the total (the bound still holds).
      this.deps.log.error({ err }, 'could not read API call totals');
    } finally {
      for (const id of accountIds) delete counts.accounts.get(id)!.reading;
    }
  }

  private rollOver() {
    const ended = this.current;
    this.current = this.monthCounts(this.now());
    // The ended month's counts are written under its own month.
    this.flushing = (this.flushing ?? Promise.resolve(true)).then(() => this.writeBatch(ended));
  }

  private monthCounts(at: number): MonthCounts {
    const month = monthOf(new Date(at));
    const { from, to } = monthRange(month);
    return { month, from, endsAt: to.getTime(), accounts: new Map() };
  }

  private capExceeded(who: 'member' | 'token', limit: number) {
    const err = this.quotaExceeded(limit);
    const whose = who === 'member' ? 'this member' : 'this API token';
    return new AppError('quota_exceeded', `${whose} has used its ${limit} API calls of ${this.current.month} (a cap the account's owner or an admin set); calls are accepted again from the next month (UTC), in ${err.details!.retryAfterSeconds} s, or once the cap is raised`, {
      ...err.details,
      cap: who,
    });
  }

  private quotaExceeded(limit: number) {
    const now = this.now();
    const retryAfterSeconds = Math.max(1, Math.ceil((this.current.endsAt - now) / 1000));
    const windowSeconds = Math.round((this.current.endsAt - this.current.from.getTime()) / 1000);
    return new AppError('quota_exceeded', `this account has used its ${limit} API calls of ${this.current.month} (its plan's monthly limit); calls are accepted again from the next month (UTC), in ${retryAfterSeconds} s`, {
      retryAfterSeconds,
      headers: quotaHeaders(limit, windowSeconds, retryAfterSeconds),
    });
  }
}

/** The standard fields the rate limits answer with (http/rate-limit.ts), for the spent monthly quota. */
function quotaHeaders(limit: number, windowSeconds: number, retryAfterSeconds: number): Record<string, string> {
  return rateLimitHeaders(
    { name: 'monthly-api-calls', limit, windowSeconds },
    { allowed: false, remaining: 0, retryAfterSeconds, resetSeconds: retryAfterSeconds },
  );
}
