// What /readyz answers, on a database double: each check's answer, and a database that hangs.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Database } from '../db/database.ts';
import { latestMigrationVersion } from '../db/migrate.ts';
import { checkReadiness } from './readiness.ts';

/** A database answering SELECT 1 and the schema's version as told; `hang`: it never answers. */
function database(answers: { down?: boolean; hang?: boolean; schema?: number | 'no table' }): Database {
  return {
    async query(sql: string) {
      if (answers.hang) return new Promise(() => {});
      if (answers.down) throw new Error('connect ECONNREFUSED 10.0.0.5:5432');
      if (sql === 'SELECT 1') return [{}];
      if (answers.schema === 'no table') throw new Error('relation "schema_migrations" does not exist');
      return [{ version: answers.schema ?? null }];
    },
  } as unknown as Database;
}

const ready = { isReady: () => true };
const started = () => 'ok';
const current = latestMigrationVersion();

afterEach(() => vi.useRealTimers());

describe('readiness', () => {
  it('is ready when the service has started, the database answers with a current schema and the runtime has synced', async () => {
    expect(await checkReadiness({ db: database({ schema: current }), runtime: ready, serviceState: started })).toEqual({
      ready: true,
      checks: { service: 'ok', database: 'ok', migrations: 'ok', runtime: 'ok' },
    });
  });

  it('takes a schema ahead of this code (a newer replica migrated), not one behind it', async () => {
    expect((await checkReadiness({ db: database({ schema: current + 1 }), runtime: ready, serviceState: started })).ready).toBe(true);
    const behind = await checkReadiness({ db: database({ schema: current - 1 }), runtime: ready, serviceState: started });
    expect(behind.ready).toBe(false);
    expect(behind.checks.migrations).toBe(`schema at version ${current - 1}, this version needs ${current}`);
    const empty = await checkReadiness({ db: database({ schema: 'no table' }), runtime: ready, serviceState: started });
    expect(empty.checks.migrations).toBe(`schema at version 0, this version needs ${current}`);
  });

  it("says a database that refuses is not answering, without the driver's message (the probe is public)", async () => {
    const answer = await checkReadiness({ db: database({ down: true }), runtime: ready, serviceState: started });
    expect(answer).toEqual({
      ready: false,
      checks: { service: 'ok', database: 'not answering', migrations: 'unknown: the database did not answer', runtime: 'ok' },
    });
    expect(JSON.stringify(answer)).not.toContain('10.0.0.5');
  });

  it('gives up on a database that hangs after two seconds', async () => {
    vi.useFakeTimers();
    const answer = checkReadiness({ db: database({ hang: true }), runtime: ready, serviceState: started });
    await vi.advanceTimersByTimeAsync(1_999);
    let settled = false;
    void answer.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await answer).checks.database).toBe('not answering');
  });

  it('is not ready while starting or stopping, or before the runtime has synced, saying why', async () => {
    const stopping = await checkReadiness({ db: database({ schema: current }), runtime: ready, serviceState: () => 'shutting down' });
    expect([stopping.ready, stopping.checks.service]).toEqual([false, 'shutting down']);
    const unsynced = await checkReadiness({ db: database({ schema: current }), runtime: { isReady: () => false }, serviceState: started });
    expect([unsynced.ready, unsynced.checks.runtime]).toEqual([false, 'the Kubernetes watches have not synced yet']);
  });
});
