// One small interface over the two databases we run on: embedded PGlite (a laptop, tests) and
// PostgreSQL through `pg` (past one machine). Everything above this file is written against
// `Database` and never knows which one it has.
import { mkdirSync } from 'node:fs';
import type { PGlite as PGliteType, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import type { Pool, PoolClient } from 'pg';
import { CommitSignals, type CommitSignal } from './commit-signals.ts';
import { storableParams } from './storable-text.ts';

export interface Queryable {
  /** One statement with $n parameters; returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Tells this process's waiting readers about a write just made (see commit-signals.ts): at once
   * outside a transaction (the statement has committed), after COMMIT inside one, never if it
   * rolls back.
   */
  signalAfterCommit(signal: CommitSignal): void;
}

// Statements run many times a second whose planning costs as much as their work (the webhook
// dispatcher's claim, settle and fan-out: CTEs over several tables) are prepared once per
// connection on PostgreSQL and only executed after that. PGlite reads the mark as a comment.
const PREPARED_MARK = '-- prepared statement: ';
const preparedTexts = new Map<string, string>();

/**
 * Marks `sql` to be prepared under `name` on each PostgreSQL connection. Call it once, at module
 * level: a name stands for one text (PostgreSQL would refuse the same name with another text).
 * Only for fixed texts: every distinct statement prepared stays in each connection's memory.
 */
export function preparedStatement(name: string, sql: string): string {
  const text = `${PREPARED_MARK}${name}\n${sql}`;
  const known = preparedTexts.get(name);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${name} is declared twice with different texts`);
  preparedTexts.set(name, text);
  return text;
}

function preparedName(sql: string): string | undefined {
  return sql.startsWith(PREPARED_MARK) ? sql.slice(PREPARED_MARK.length, sql.indexOf('\n')) : undefined;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Where readers register for the signals of committed writes. */
  readonly commitSignals: CommitSignals;
  /** PostgreSQL's connection pool right now (metrics); PGlite has none. */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections open, idle among them, and callers waiting for one. */
  total: number;
  idle: number;
  waiting: number;
}

// PostgreSQL settings of the embedded database, on top of PGlite's own start parameters. Its shared
// buffers are memory of the WebAssembly instance, which never shrinks: PostgreSQL's default
// (128 MB, 160 MB as PGlite sizes it) filled up within the first minutes of use and was half of
// the idle service's RSS. A laptop's control-plane database is a few MB, and a page that misses
// the buffers is read from the file system's cache (a system call, not a disk read). 8 MB and 16
// MB measured within noise of each other (docs/BENCHMARKS.md, "Memory").
export const PGLITE_SETTINGS = ['-c', 'shared_buffers=8MB'];

export async function openPglite(dataDir: string | undefined): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const pglite: PGliteType = await PGlite.create(dataDir ?? 'memory://', { startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS] });
  const commitSignals = new CommitSignals();
  const wrap = (q: PGliteType | PGliteTransaction, signal: (s: CommitSignal) => void): Queryable => ({
    async query<T>(sql: string, params: unknown[] = []) {
      // Client text reaches the database only through here: made storable (storable-text.ts).
      return (await q.query<T>(sql, storableParams(params))).rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
    signalAfterCommit: signal,
  });
  return {
    kind: 'pglite',
    ...wrap(pglite, (s) => commitSignals.emit([s])),
    commitSignals,
    // PGlite is a single session: its transaction() serialises every path through one queue.
    transaction: (fn) => commitSignals.afterCommitOf((signal) => pglite.transaction((tx) => fn(wrap(tx, signal)))),
    close: () => pglite.close(),
  };
}

export async function openPostgres(url: string, poolSize = 10): Promise<Database> {
  const pg = (await import('pg')).default;
  const pool: Pool = new pg.Pool({ connectionString: url, max: poolSize });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const commitSignals = new CommitSignals();
  const wrap = (c: Pool | PoolClient, signal: (s: CommitSignal) => void): Queryable => ({
    async query<T>(sql: string, unsafeParams: unknown[] = []) {
      // Client text reaches the database only through here: made storable (storable-text.ts).
      const params = storableParams(unsafeParams);
      const name = preparedName(sql);
      // pg parses a named statement on a connection's first use of the name, then only executes it.
      return (await (name === undefined ? c.query(sql, params) : c.query({ name, text: sql, values: params }))).rows as T[];
    },
    async exec(sql: string) {
      await c.query(sql);
    },
    signalAfterCommit: signal,
  });
  await pool.query('SELECT 1');
  return {
    kind: 'postgres',
    ...wrap(pool, (s) => commitSignals.emit([s])),
    commitSignals,
    transaction: (fn) =>
      commitSignals.afterCommitOf(async (signal) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const result = await fn(wrap(client, signal));
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        } finally {
          client.release();
        }
      }),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  };
}
