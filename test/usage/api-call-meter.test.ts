// The API call meter against a real database (PGlite; PostgreSQL with TEST_DATABASE_URL, where the
// two replicas below each have a connection pool of their own): counts reach the database in
// batches, two replicas counting against one small limit both end up refusing, and what they admit
// stays within the documented bound (docs/USAGE.md): limit + replicas × USAGE_FLUSH_BATCH - 1.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { openPostgres, type Database } from '../../src/db/database.ts';
import { AppError } from '../../src/errors.ts';
import { ApiCallMeter } from '../../src/usage/api-call-meter.ts';
import { UsageService } from '../../src/usage/service.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { databaseLabel, insertOwnerUser, openMigratedTestDb } from '../helpers/database.ts';

const LIMIT = 40;
const BATCH = 5;
const log = createLogger('silent');
// Real nodes: the meter keeps a node id only when it is one of the account's nodes.
const N1 = '1'.repeat(32);
const N2 = '2'.repeat(32);

let t: Awaited<ReturnType<typeof openMigratedTestDb>>;
let second: Database | undefined;

beforeEach(async () => {
  t = await openMigratedTestDb();
  await t.db.query(`INSERT INTO plans (name, max_nodes, api_calls_per_month, max_users) VALUES ('tiny', 1, $1, 1)`, [LIMIT]);
  await insertOwnerUser(t.db, 'acct-a', 'a@example.com', 'tiny');
  await insertOwnerUser(t.db, 'acct-b', 'b@example.com', 'scale');
  await insertRelease(t.db, 'v1');
  for (const [id, account] of [[N1, 'acct-b'], [N2, 'acct-a']]) {
    await t.db.query(
      `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings) VALUES ($1, $2, $1, 'regtest', 'RUNNING', 'running', 'v1', '{}')`,
      [id, account],
    );
  }
});
afterEach(async () => {
  await second?.close();
  second = undefined;
  await t.close();
});

/** A second replica's own connection to the same database (PGlite has one connection to share). */
async function secondConnection(): Promise<Database> {
  if (t.db.kind === 'pglite') return t.db;
  const url = (t.db as unknown as { url?: string }).url;
  const found = url ?? (await t.db.query<{ db: string }>('SELECT current_database() AS db'))[0]!.db;
  const admin = new URL(process.env.TEST_DATABASE_URL!);
  admin.pathname = `/${found}`;
  second = await openPostgres(admin.toString());
  return second;
}

const meter = (db: Database, now?: () => number) => new ApiCallMeter({ db, flushIntervalMs: 60_000, batchSize: BATCH, log, now });

/** One call; true when admitted, false when refused with quota_exceeded. */
async function call(m: ApiCallMeter, account: string, node = '', kind: 'api' | 'gateway' = 'gateway'): Promise<boolean> {
  try {
    await m.admit(account, node, kind);
    return true;
  } catch (err) {
    if (err instanceof AppError && err.code === 'quota_exceeded') return false;
    throw err;
  }
}

describe(`the API call meter (${databaseLabel()})`, () => {
  it('writes its counts in batches, per node and kind, and answers them before they are written', async () => {
    const m = meter(t.db);
    for (let i = 0; i < 3; i++) await call(m, 'acct-b', N1, 'gateway');
    await call(m, 'acct-b', '', 'api');
    expect(m.unwrittenCalls('acct-b')).toEqual(expect.arrayContaining([{ node_id: N1, kind: 'gateway', calls: 3 }, { node_id: '', kind: 'api', calls: 1 }]));
    expect(await t.db.query('SELECT * FROM api_call_counts')).toEqual([]);
    await m.stop();
    const rows = await t.db.query<{ node_id: string; kind: string; calls: string | number }>('SELECT node_id, kind, calls FROM api_call_counts ORDER BY node_id');
    expect(rows.map((r) => [r.node_id, r.kind, Number(r.calls)])).toEqual([['', 'api', 1], [N1, 'gateway', 3]]);
    expect(m.unwrittenCalls('acct-b')).toEqual([]);
  });

  it('two replicas counting against one small limit both end up refusing, within the bound', async () => {
    const replicas = [meter(t.db), meter(await secondConnection())];
    let admitted = 0;
    // Both replicas take calls at once, in waves, far past the limit.
    for (let wave = 0; wave < 20; wave++) {
      // Many calls at once per replica: more wait for a batch than fit in the next one.
      const answers = await Promise.all(replicas.flatMap((m) => Array.from({ length: wave % 2 === 0 ? 30 : 4 }, () => call(m, 'acct-a', N2))));
      admitted += answers.filter(Boolean).length;
    }
    await Promise.all(replicas.map((m) => m.flush()));
    // Once written totals reach the limit, every replica refuses.
    for (const m of replicas) expect(await call(m, 'acct-a', N2)).toBe(false);
    expect(admitted).toBeGreaterThanOrEqual(LIMIT);
    expect(admitted).toBeLessThanOrEqual(LIMIT + replicas.length * BATCH - 1);
    await Promise.all(replicas.map((m) => m.stop()));
    const [total] = await t.db.query<{ calls: string | number }>(`SELECT calls FROM api_call_totals WHERE account_id = 'acct-a'`);
    expect(Number(total!.calls)).toBe(admitted);
    // An unlimited account next to it is never refused.
    const m = replicas[0]!;
    for (let i = 0; i < 3 * LIMIT; i++) expect(await call(m, 'acct-b')).toBe(true);
  });

  it('refuses with Retry-After until the next month (UTC) and the RateLimit fields, and admits again then', async () => {
    let now = Date.parse('2026-11-30T23:59:00Z');
    const m = meter(t.db, () => now);
    await t.db.query(`INSERT INTO api_call_totals (account_id, month, calls) VALUES ('acct-a', '2026-11-01', $1)`, [LIMIT]);
    const refusal = await Promise.resolve(m.admit('acct-a', '', 'api')).then(() => undefined, (err: AppError) => err);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal!.code).toBe('quota_exceeded');
    expect(refusal!.details).toMatchObject({
      retryAfterSeconds: 60,
      headers: { 'retry-after': '60', ratelimit: '"monthly-api-calls";r=0;t=60', 'ratelimit-policy': `"monthly-api-calls";q=${LIMIT};w=${30 * 86400}` },
    });
    now = Date.parse('2026-12-01T00:00:01Z');
    expect(await call(m, 'acct-a')).toBe(true);
    await m.stop();
    const months = await t.db.query<{ month: Date; calls: string | number }>(`SELECT month, calls FROM api_call_totals WHERE account_id = 'acct-a' ORDER BY month`);
    expect(months.map((r) => Number(r.calls))).toEqual([LIMIT, 1]);
  });

  it("counts a node id that is not one of the account's nodes (a NUL byte, too long, unicode, another account's) under no node", async () => {
    const m = meter(t.db);
    const hostile = ['abc\u0000def', `${'a'.repeat(31)}\u0000`, 'x'.repeat(4000), 'nœud-ü', '\uD800', 'gateway', N2, 'f'.repeat(32)];
    for (const nodeId of hostile) await call(m, 'acct-b', nodeId, 'api');
    await call(m, 'acct-b', N1, 'api');
    expect(await m.flush()).toBe(true);
    const rows = await t.db.query<{ node_id: string; kind: string; calls: string | number }>(`SELECT node_id, kind, calls FROM api_call_counts WHERE account_id = 'acct-b' ORDER BY node_id`);
    expect(rows.map((r) => [r.node_id, r.kind, Number(r.calls)])).toEqual([['', 'api', hostile.length], [N1, 'api', 1]]);
    await m.stop();
  });

  it('splits a batch the database refuses, writes every other increment, and drops the bad one with one warning, not an error a second', async () => {
    const logged: Array<{ level: string; msg: string }> = [];
    const capture = createLogger('silent');
    for (const level of ['error', 'warn'] as const) {
      (capture as unknown as Record<string, unknown>)[level] = (_obj: unknown, msg: string) => logged.push({ level, msg });
    }
    const m = new ApiCallMeter({ db: t.db, flushIntervalMs: 60_000, batchSize: 1000, log: capture });
    // A kind the table's check refuses (what a NUL in a node id once made of its count's key):
    // the one increment the batch cannot take.
    await call(m, 'acct-b', N1);
    await call(m, 'acct-b', '', 'bogus' as 'api');
    await call(m, 'acct-a', N2);
    await call(m, 'acct-b', '', 'api');
    const errorsBefore = logged.filter((l) => l.level === 'error').length;
    expect(await m.flush()).toBe(true);
    for (let i = 0; i < 5; i++) expect(await m.flush()).toBe(true);
    const rows = await t.db.query<{ account_id: string; node_id: string; kind: string; calls: string | number }>('SELECT account_id, node_id, kind, calls FROM api_call_counts ORDER BY account_id, node_id, kind');
    expect(rows.map((r) => [r.account_id, r.node_id, r.kind, Number(r.calls)])).toEqual([['acct-a', N2, 'gateway', 1], ['acct-b', '', 'api', 1], ['acct-b', N1, 'gateway', 1]]);
    expect(logged.filter((l) => l.level === 'error').length).toBe(errorsBefore);
    expect(logged.filter((l) => l.level === 'warn')).toHaveLength(1);
    await m.stop();
  });
  it("answers an account's month of calls exactly while a batch of them is being written", async () => {
    // The batch statement is held until released: its counts are then neither unwritten nor written.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let writing!: () => void;
    const writeStarted = new Promise<void>((resolve) => (writing = resolve));
    const slowWrites: Database = Object.create(t.db, {
      query: {
        value: async (sql: string, params?: unknown[]) => {
          if (sql.includes('INSERT INTO api_call_caller_counts')) {
            writing();
            await held;
          }
          return t.db.query(sql, params as never);
        },
      },
    });
    const m = meter(slowWrites);
    const usage = new UsageService({ db: t.db, meter: m });
    for (let i = 0; i < 3; i++) expect(await call(m, 'acct-b', N1)).toBe(true);
    const flushed = m.flush();
    await writeStarted;
    const during = usage.monthApiCalls('acct-b');
    release();
    expect(await during).toBe(3);
    expect(await flushed).toBe(true);
    expect(await usage.monthApiCalls('acct-b')).toBe(3);
    await m.stop();
  });

  it('admits exactly the limit while a batch that wrote the last calls is still reading refused accounts', async () => {
    // A refused account (acct-c, its month spent) is read again after every batch. While that read
    // runs, the batch's calls are in the database's total the meter learnt: counted in what is
    // being written as well, they made admit refuse the limit's last call (and admit one past
    // a refusal after the batch).
    await insertOwnerUser(t.db, 'acct-c', 'c@example.com', 'tiny');
    let hold = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reading!: () => void;
    const readStarted = new Promise<void>((resolve) => (reading = resolve));
    const slowReads: Database = Object.create(t.db, {
      query: {
        value: async (sql: string, params?: unknown[]) => {
          if (hold && sql.includes('FROM accounts a JOIN plans p')) {
            reading();
            await held;
          }
          return t.db.query(sql, params as never);
        },
      },
    });
    const m = meter(slowReads);
    while (await call(m, 'acct-c'));
    for (let i = 0; i < LIMIT - 2; i++) expect(await call(m, 'acct-a')).toBe(true);
    expect(await m.flush()).toBe(true);
    expect(await call(m, 'acct-a')).toBe(true);
    hold = true;
    const flushed = m.flush();
    await readStarted;
    expect(await call(m, 'acct-a')).toBe(true);
    release();
    expect(await flushed).toBe(true);
    expect(await m.flush()).toBe(true);
    expect(await call(m, 'acct-a')).toBe(false);
    await m.stop();
  });
});
