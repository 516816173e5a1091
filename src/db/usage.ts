// Metered usage (migration 0021): nodes' status changes, API call counts, and closed months.
// Months are passed as their first day (a UTC Date); every range is [from, to).
import type { Queryable } from './database.ts';
import { jsonParam } from './storable-text.ts';

// The changes that decide an account's node time in [from, to): each node's last change before
// `from` when it left the node RUNNING or PAUSED (what the period starts in), then its changes
// inside the period. The nodes are those of the account now and those with a change in the period
// (a destroyed node whose row was purged since).
const ACCOUNT_CHANGES = `
  in_period AS (
    SELECT id, node_id, status, changed_at FROM node_status_changes
     WHERE account_id = $1 AND changed_at >= $2 AND changed_at < $3
  ), node_ids AS (
    SELECT id AS node_id FROM nodes WHERE user_id = $1 UNION SELECT node_id FROM in_period
  ), before_period AS (
    SELECT c.id, c.node_id, c.status, c.changed_at FROM node_ids n
      CROSS JOIN LATERAL (
        SELECT id, node_id, status, changed_at FROM node_status_changes
         WHERE node_id = n.node_id AND changed_at < $2 ORDER BY changed_at DESC, id DESC LIMIT 1
      ) c
     WHERE c.status IN ('RUNNING', 'PAUSED')
  ), changes AS (
    SELECT * FROM before_period UNION ALL SELECT * FROM in_period
  )`;

export interface StatusChangeRow {
  node_id: string;
  status: string;
  changed_at: Date;
}

/** An account's changes that decide its node time in [from, to), by node then in the order made. */
export async function findAccountStatusChanges(db: Queryable, accountId: string, from: Date, to: Date): Promise<StatusChangeRow[]> {
  return db.query<StatusChangeRow>(`WITH ${ACCOUNT_CHANGES} SELECT node_id, status, changed_at FROM changes ORDER BY node_id, changed_at, id`, [accountId, from, to]);
}

export interface NodeTimeRow {
  node_id: string;
  running_ms: number;
  paused_ms: number;
  /** [day index in the period, running ms, paused ms] for the days with time. */
  days: Array<[number, number, number]>;
}

// An account's RUNNING and PAUSED intervals that overlap [from ($2), to ($3)), each
// [changed_at, ended_at) (migration 0021), in epoch milliseconds cut to [from ($4), until ($5)), then
// split by UTC day (index from `from`): the same arithmetic as usage/node-time.ts (its test proves
// them equal) on values float8 holds exactly. Node ids are compared byte-wise (COLLATE "C"):
// sorting by them under the database's collation cost more than the sums.
const DAY_PARTS = `
  intervals AS (
    SELECT node_id COLLATE "C" AS node_id, status,
           greatest(extract(epoch FROM changed_at)::float8 * 1000, $4::float8) AS s,
           least(coalesce(extract(epoch FROM ended_at)::float8 * 1000, $5::float8), $5::float8) AS e
      FROM node_status_changes
     WHERE account_id = $1 AND status IN ('RUNNING', 'PAUSED') AND changed_at < $3 AND (ended_at > $2 OR ended_at IS NULL)
  ), day_parts AS (
    SELECT i.node_id, d.day, i.status,
           least(i.e, $4::float8 + (d.day + 1) * 86400000::float8) - greatest(i.s, $4::float8 + d.day * 86400000::float8) AS ms
      FROM intervals i
     CROSS JOIN LATERAL generate_series(floor((i.s - $4::float8) / 86400000)::int, floor((i.e - 1 - $4::float8) / 86400000)::int) AS d(day)
     WHERE i.e > i.s
  )`;

const timeParams = (accountId: string, from: Date, to: Date, until: Date) => [accountId, from, to, from.getTime(), Math.min(until.getTime(), to.getTime())];

/** An account's RUNNING and PAUSED time per node within [from, to), cut at `until`, with each node's days (a month's snapshot). */
export async function sumAccountNodeTime(db: Queryable, accountId: string, from: Date, to: Date, until: Date): Promise<NodeTimeRow[]> {
  const rows = await db.query<{ node_id: string; running_ms: number | string; paused_ms: number | string; days: Array<[number, number, number]> }>(
    `WITH ${DAY_PARTS}, per_day AS (
       SELECT node_id, day, sum(ms) FILTER (WHERE status = 'RUNNING') AS running, sum(ms) FILTER (WHERE status = 'PAUSED') AS paused
         FROM day_parts GROUP BY node_id, day
     )
     SELECT node_id, coalesce(sum(running), 0) AS running_ms, coalesce(sum(paused), 0) AS paused_ms,
            json_agg(json_build_array(day, coalesce(running, 0), coalesce(paused, 0)) ORDER BY day) AS days
       FROM per_day GROUP BY node_id`,
    timeParams(accountId, from, to, until),
  );
  return rows.map((r) => ({ node_id: r.node_id, running_ms: Number(r.running_ms), paused_ms: Number(r.paused_ms), days: r.days }));
}

export interface AccountTimeTotals {
  /** Per node: RUNNING and PAUSED ms. */
  nodes: Array<{ node_id: string; running_ms: number; paused_ms: number }>;
  /** Per day index with time, summed over the nodes: RUNNING and PAUSED ms. */
  days: Array<{ day: number; running_ms: number; paused_ms: number }>;
}

/**
 * The same time per node (summed over whole intervals) and per day of the whole account (over the
 * day parts), of `visible` nodes when given: 1,000 nodes answer ~1,030 rows instead of one per node
 * and day, and neither sum groups 34,000 day parts by node.
 */
export async function sumAccountTime(db: Queryable, accountId: string, from: Date, to: Date, until: Date, visible: readonly string[] | null): Promise<AccountTimeTotals> {
  const rows = await db.query<{ node_id: string | null; day: number | null; running_ms: number | string; paused_ms: number | string }>(
    `WITH ${DAY_PARTS}
     SELECT node_id, NULL::int AS day,
            coalesce(sum(e - s) FILTER (WHERE status = 'RUNNING'), 0) AS running_ms, coalesce(sum(e - s) FILTER (WHERE status = 'PAUSED'), 0) AS paused_ms
       FROM intervals WHERE e > s AND ($6::text[] IS NULL OR node_id = ANY($6::text[]))
      GROUP BY node_id
     UNION ALL
     SELECT NULL, day, coalesce(sum(ms) FILTER (WHERE status = 'RUNNING'), 0), coalesce(sum(ms) FILTER (WHERE status = 'PAUSED'), 0)
       FROM day_parts WHERE $6::text[] IS NULL OR node_id = ANY($6::text[])
      GROUP BY day`,
    [...timeParams(accountId, from, to, until), visible],
  );
  const totals: AccountTimeTotals = { nodes: [], days: [] };
  for (const r of rows) {
    const figures = { running_ms: Number(r.running_ms), paused_ms: Number(r.paused_ms) };
    if (r.node_id !== null) totals.nodes.push({ node_id: r.node_id, ...figures });
    else totals.days.push({ day: r.day!, ...figures });
  }
  return totals;
}

export interface NodeNameRow {
  id: string;
  name: string;
}

/** The account's nodes that existed at some time in [from, to), with their names. */
export async function findAccountNodesIn(db: Queryable, accountId: string, from: Date, to: Date): Promise<NodeNameRow[]> {
  return db.query<NodeNameRow>(
    `SELECT id, name FROM nodes WHERE user_id = $1 AND created_at < $3 AND (destroyed_at IS NULL OR destroyed_at >= $2) ORDER BY created_at, id`,
    [accountId, from, to],
  );
}

/** Names of the account's nodes by id (those whose row still exists); another account's are not. */
export async function findNodeNames(db: Queryable, accountId: string, nodeIds: readonly string[]): Promise<NodeNameRow[]> {
  return db.query<NodeNameRow>('SELECT id, name FROM nodes WHERE user_id = $1 AND id = ANY($2::text[])', [accountId, nodeIds]);
}

export interface ApiCallCountRow {
  node_id: string;
  kind: 'api' | 'gateway';
  calls: number;
}

/** The account's flushed API calls of a month, per node ('' for none) and kind. */
export async function findAccountApiCalls(db: Queryable, accountId: string, month: Date): Promise<ApiCallCountRow[]> {
  const rows = await db.query<{ node_id: string; kind: 'api' | 'gateway'; calls: string | number }>(
    'SELECT node_id, kind, calls FROM api_call_counts WHERE account_id = $1 AND month = $2',
    [accountId, month],
  );
  return rows.map((r) => ({ ...r, calls: Number(r.calls) }));
}

export interface ApiCallIncrement {
  accountId: string;
  /** '' for a call about no node. */
  nodeId: string;
  kind: 'api' | 'gateway';
  /** Who called ('' for a gateway call through a client certificate), and with which token ('' for a web session). */
  userId: string;
  tokenId: string;
  calls: number;
}

export interface AccountCallTotal {
  accountId: string;
  /** The account's flushed calls of the month, every replica's. */
  calls: number;
  /** The account's plan and its monthly limit (null: unlimited); undefined plan: no such account. */
  plan: string | undefined;
  limit: number | null;
}

interface TotalRow {
  account_id: string;
  calls: string | number;
  plan: string | null;
  api_calls_per_month: string | number | null;
}

const totalFromRow = (r: TotalRow): AccountCallTotal => ({
  accountId: r.account_id,
  calls: Number(r.calls),
  plan: r.plan ?? undefined,
  limit: r.api_calls_per_month === null ? null : Number(r.api_calls_per_month),
});

/** A member's ('user:<id>') or token's ('token:<id>') total of the month and its cap (null: none). */
export interface CallerCallTotal {
  accountId: string;
  caller: string;
  calls: number;
  limit: number | null;
}

export interface BatchTotals {
  accounts: AccountCallTotal[];
  callers: CallerCallTotal[];
}

const callerTotalFromRow = (r: { account_id: string; caller: string; calls: string | number; api_calls_per_month: string | number | null }): CallerCallTotal => ({
  accountId: r.account_id,
  caller: r.caller,
  calls: Number(r.calls),
  limit: r.api_calls_per_month === null ? null : Number(r.api_calls_per_month),
});

/** A member's and a token's totals of a month (0 before their first call) with their caps; a token '' is left out. */
export async function findCallerTotals(db: Queryable, month: Date, accountId: string, userId: string, tokenId: string): Promise<CallerCallTotal[]> {
  const rows = await db.query<{ account_id: string; caller: string; calls: string | number; api_calls_per_month: string | number | null }>(
    `SELECT $2::text AS account_id, 'user:' || m.user_id AS caller, coalesce(t.calls, 0) AS calls, m.monthly_api_calls AS api_calls_per_month
       FROM account_members m LEFT JOIN api_call_member_totals t ON t.account_id = m.account_id AND t.month = $1 AND t.user_id = m.user_id
      WHERE m.account_id = $2 AND m.user_id = $3
     UNION ALL
     SELECT $2::text, 'token:' || k.id, coalesce(c.calls, 0), k.monthly_api_calls
       FROM api_tokens k LEFT JOIN api_call_caller_counts c ON c.account_id = $2 AND c.month = $1 AND c.user_id = k.user_id AND c.token_id = k.id
      WHERE k.id = $4`,
    [month, accountId, userId, tokenId],
  );
  return rows.map(callerTotalFromRow);
}

/**
 * Adds a batch of counts (at most one increment per account, node and kind) to a month and
 * answers the accounts' new totals with their plans' limits. One statement: the totals row of an
 * account is locked by the first batch to reach it, so concurrent batches of several replicas are
 * ordered and each reads the total including every batch committed before it. Increments must be
 * sorted by account (then node and kind) so that two batches lock rows in the same order. A node
 * id that is not one of the account's nodes (made up, another account's) is counted under ''
 * (no node): only real nodes get a counting row.
 */
export async function addApiCalls(db: Queryable, month: Date, increments: readonly ApiCallIncrement[]): Promise<BatchTotals> {
  if (increments.length === 0) return { accounts: [], callers: [] };
  const rows = await db.query<TotalRow & { what: 'account' | 'user' | 'token'; caller_id: string }>(
    `WITH inc AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[]) AS i(account_id, node_id, kind, calls, user_id, token_id)
     ), callers AS (
       INSERT INTO api_call_caller_counts (account_id, month, user_id, token_id, calls)
       SELECT account_id, $1, user_id, token_id, sum(calls) FROM inc WHERE user_id <> ''
        GROUP BY account_id, user_id, token_id ORDER BY account_id, user_id, token_id
       ON CONFLICT (account_id, month, user_id, token_id) DO UPDATE SET calls = api_call_caller_counts.calls + excluded.calls
       RETURNING account_id, user_id, token_id, calls
     ), members AS (
       INSERT INTO api_call_member_totals (account_id, month, user_id, calls)
       SELECT account_id, $1, user_id, sum(calls) FROM inc WHERE user_id <> ''
        GROUP BY account_id, user_id ORDER BY account_id, user_id
       ON CONFLICT (account_id, month, user_id) DO UPDATE SET calls = api_call_member_totals.calls + excluded.calls
       RETURNING account_id, user_id, calls
     ), real AS (
       SELECT account_id, node_id, kind, sum(calls) AS calls FROM (
         SELECT i.account_id, i.kind, i.calls,
                CASE WHEN EXISTS (SELECT 1 FROM nodes WHERE id = i.node_id AND user_id = i.account_id) THEN i.node_id ELSE '' END AS node_id
           FROM inc i
       ) r GROUP BY account_id, node_id, kind
     ), counted AS (
       INSERT INTO api_call_counts (account_id, month, node_id, kind, calls)
       SELECT account_id, $1, node_id, kind, calls FROM real ORDER BY account_id, node_id, kind
       ON CONFLICT (account_id, month, node_id, kind) DO UPDATE SET calls = api_call_counts.calls + excluded.calls
     ), totals AS (
       INSERT INTO api_call_totals (account_id, month, calls)
       SELECT account_id, $1, sum(calls) FROM inc GROUP BY account_id ORDER BY account_id
       ON CONFLICT (account_id, month) DO UPDATE SET calls = api_call_totals.calls + excluded.calls
       RETURNING account_id, calls
     )
     SELECT 'account' AS what, t.account_id, '' AS caller_id, t.calls, a.plan, p.api_calls_per_month
       FROM totals t LEFT JOIN accounts a ON a.id = t.account_id LEFT JOIN plans p ON p.name = a.plan
     UNION ALL
     SELECT 'user', m.account_id, m.user_id, m.calls, NULL, am.monthly_api_calls
       FROM members m LEFT JOIN account_members am ON am.account_id = m.account_id AND am.user_id = m.user_id
     UNION ALL
     SELECT 'token', c.account_id, c.token_id, c.calls, NULL, k.monthly_api_calls
       FROM callers c LEFT JOIN api_tokens k ON k.id = c.token_id WHERE c.token_id <> ''`,
    [
      month,
      increments.map((i) => i.accountId),
      increments.map((i) => i.nodeId),
      increments.map((i) => i.kind),
      increments.map((i) => i.calls),
      increments.map((i) => i.userId),
      increments.map((i) => i.tokenId),
    ],
  );
  return {
    accounts: rows.filter((r) => r.what === 'account').map(totalFromRow),
    callers: rows.filter((r) => r.what !== 'account').map((r) => callerTotalFromRow({ ...r, caller: `${r.what}:${r.caller_id}` })),
  };
}

export interface ApiCallerCountRow {
  user_id: string;
  /** '' for the member's calls without a token (the web session). */
  token_id: string;
  calls: number;
}

export interface ApiCallerNameRow {
  user_id: string;
  email: string | null;
  token_id: string;
  token_name: string | null;
}

/** The account's flushed API calls of a month per member and token. */
export async function findAccountCallerCalls(db: Queryable, accountId: string, month: Date): Promise<ApiCallerCountRow[]> {
  const rows = await db.query<{ user_id: string; token_id: string; calls: string | number }>(
    'SELECT user_id, token_id, calls FROM api_call_caller_counts WHERE account_id = $1 AND month = $2',
    [accountId, month],
  );
  return rows.map((r) => ({ ...r, calls: Number(r.calls) }));
}

/** The members' emails and the tokens' names, with their caps (those whose rows still exist), by id. */
export async function findCallerNames(db: Queryable, userIds: readonly string[], tokenIds: readonly string[]) {
  const [users, tokens] = await Promise.all([
    db.query<{ id: string; email: string; cap: string | number | null }>(
      'SELECT u.id, u.email, m.monthly_api_calls AS cap FROM users u LEFT JOIN account_members m ON m.user_id = u.id WHERE u.id = ANY($1::text[])',
      [userIds],
    ),
    db.query<{ id: string; name: string; cap: string | number | null }>('SELECT id, name, monthly_api_calls AS cap FROM api_tokens WHERE id = ANY($1::text[])', [tokenIds]),
  ]);
  const cap = (c: string | number | null) => (c === null ? null : Number(c));
  return {
    members: new Map(users.map((u) => [u.id, { email: u.email, cap: cap(u.cap) }])),
    tokens: new Map(tokens.map((t) => [t.id, { name: t.name, cap: cap(t.cap) }])),
  };
}

/** The accounts' flushed totals of a month (0 before their first call) with their plans' limits. */
export async function findAccountCallTotals(db: Queryable, month: Date, accountIds: readonly string[]): Promise<AccountCallTotal[]> {
  const rows = await db.query<TotalRow>(
    `SELECT a.id AS account_id, coalesce(t.calls, 0) AS calls, a.plan, p.api_calls_per_month
       FROM accounts a JOIN plans p ON p.name = a.plan
       LEFT JOIN api_call_totals t ON t.account_id = a.id AND t.month = $1
      WHERE a.id = ANY($2::text[])`,
    [month, accountIds],
  );
  return rows.map(totalFromRow);
}

export async function isMonthClosed(db: Queryable, month: Date): Promise<boolean> {
  return (await db.query('SELECT 1 FROM usage_months_closed WHERE month = $1', [month])).length > 0;
}

/** Marks a month closed; false when it already was (another replica closed it first). */
export async function markMonthClosed(db: Queryable, month: Date): Promise<boolean> {
  return (await db.query('INSERT INTO usage_months_closed (month) VALUES ($1) ON CONFLICT DO NOTHING RETURNING month', [month])).length > 0;
}

export interface ClosedNodeMonthRow {
  account_id: string;
  node_id: string;
  node_name: string | null;
  running_seconds: number;
  paused_seconds: number;
  api_calls: number;
  gateway_calls: number;
  /** [running, paused] seconds per day of the month. */
  days: Array<[number, number]>;
}

export async function insertClosedNodeMonths(db: Queryable, month: Date, rows: readonly ClosedNodeMonthRow[]) {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO usage_closed_months (month, account_id, node_id, node_name, running_seconds, paused_seconds, api_calls, gateway_calls, days)
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::jsonb[])`,
    [
      month,
      rows.map((r) => r.account_id),
      rows.map((r) => r.node_id),
      rows.map((r) => r.node_name),
      rows.map((r) => r.running_seconds),
      rows.map((r) => r.paused_seconds),
      rows.map((r) => r.api_calls),
      rows.map((r) => r.gateway_calls),
      rows.map((r) => jsonParam(r.days)),
    ],
  );
}

/** A closed month's rows: one account's (`accountId`), or every account's. */
export async function findClosedNodeMonths(db: Queryable, month: Date, accountId?: string): Promise<ClosedNodeMonthRow[]> {
  const rows = await db.query<ClosedNodeMonthRow>(
    `SELECT account_id, node_id, node_name, running_seconds, paused_seconds, api_calls, gateway_calls, days FROM usage_closed_months
      WHERE month = $1 AND ($2::text IS NULL OR account_id = $2) ORDER BY account_id, node_id`,
    [month, accountId ?? null],
  );
  return rows.map((r) => ({
    ...r,
    running_seconds: Number(r.running_seconds),
    paused_seconds: Number(r.paused_seconds),
    api_calls: Number(r.api_calls),
    gateway_calls: Number(r.gateway_calls),
  }));
}

/**
 * Every account id with its current owner's email and the plan (the operator's report). The owner
 * is found by role, not by the account's id (its creator's, who may have handed it on or left);
 * an account being deleted has no one left: its email is ''.
 */
export async function listAccountsWithOwners(db: Queryable): Promise<Array<{ id: string; email: string; plan: string }>> {
  return db.query(
    `SELECT a.id, coalesce(u.email, '') AS email, a.plan FROM accounts a
     LEFT JOIN account_members m ON m.account_id = a.id AND m.role = 'owner' LEFT JOIN users u ON u.id = m.user_id
     ORDER BY u.email, a.id`,
  );
}

/** Accounts with node time (RUNNING or PAUSED) in [from, to), also those deleted since (their records stay). */
export async function findAccountsWithNodeTime(db: Queryable, from: Date, to: Date): Promise<string[]> {
  const rows = await db.query<{ account_id: string }>(
    `SELECT DISTINCT account_id FROM node_status_changes
     WHERE status IN ('RUNNING', 'PAUSED') AND changed_at < $2 AND (ended_at IS NULL OR ended_at > $1)`,
    [from, to],
  );
  return rows.map((r) => r.account_id);
}

/** Accounts with API calls in a month, also those deleted since (their rows stay). */
export async function findAccountsWithApiCalls(db: Queryable, month: Date): Promise<string[]> {
  return (await db.query<{ account_id: string }>('SELECT account_id FROM api_call_totals WHERE month = $1', [month])).map((r) => r.account_id);
}

/** Sets a member's monthly cap (null: none); false when the user is no member of the account. */
export async function setMemberCallCap(db: Queryable, accountId: string, userId: string, cap: number | null): Promise<boolean> {
  const rows = await db.query('UPDATE account_members SET monthly_api_calls = $3 WHERE account_id = $1 AND user_id = $2 RETURNING user_id', [accountId, userId, cap]);
  return rows.length > 0;
}

/** Sets a token's monthly cap (null: none); false when it is no token of the account's members. */
export async function setTokenCallCap(db: Queryable, accountId: string, tokenId: string, cap: number | null): Promise<boolean> {
  const rows = await db.query(
    `UPDATE api_tokens k SET monthly_api_calls = $3 FROM account_members m
      WHERE k.id = $2 AND m.user_id = k.user_id AND m.account_id = $1 RETURNING k.id`,
    [accountId, tokenId, cap],
  );
  return rows.length > 0;
}
