// One small interface over the two databases we run on: embedded PGlite (a laptop, tests) and
// PostgreSQL through `pg` (past one machine). Everything above this file is written against
// `Database` and never knows which one it has.
import { mkdirSync } from 'node:fs';
import type { PGlite as PGliteType, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import type { Pool, PoolClient } from 'pg';

export interface Queryable {
  /** One statement with $n parameters; returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function openPglite(dataDir: string | undefined): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const pglite: PGliteType = await PGlite.create(dataDir ?? 'memory://');
  const wrap = (q: PGliteType | PGliteTransaction): Queryable => ({
    async query<T>(sql: string, params: unknown[] = []) {
      return (await q.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  });
  return {
    kind: 'pglite',
    ...wrap(pglite),
    // PGlite is a single session: its transaction() serialises every path through one queue.
    transaction: (fn) => pglite.transaction((tx) => fn(wrap(tx))),
    close: () => pglite.close(),
  };
}

export async function openPostgres(url: string, poolSize = 10): Promise<Database> {
  const pg = (await import('pg')).default;
  const pool: Pool = new pg.Pool({ connectionString: url, max: poolSize });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const wrap = (c: Pool | PoolClient): Queryable => ({
    async query<T>(sql: string, params: unknown[] = []) {
      return (await c.query(sql, params)).rows as T[];
    },
    async exec(sql: string) {
      await c.query(sql);
    },
  });
  await pool.query('SELECT 1');
  return {
    kind: 'postgres',
    ...wrap(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
