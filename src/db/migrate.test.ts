// migrate() applies each numbered migration once; a database already current is only read.
import { afterEach, describe, expect, it } from 'vitest';
import { openPglite, type Database } from './database.ts';
import { listMigrations, migrate, type Migration } from './migrate.ts';

describe('migrate', () => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('applies every migration to a new database, then none', async () => {
    db = await openPglite(undefined);
    const all = listMigrations();
    expect(await migrate(db, all)).toEqual(all.map((m) => m.version));
    expect(await migrate(db, all)).toEqual([]);
  });

  it('applies one missing below the latest (a gap), not only those past the latest', async () => {
    db = await openPglite(undefined);
    const all = listMigrations();
    await migrate(db, all);
    const extra: Migration[] = [
      { version: 9001, name: 'late', sql: 'CREATE TABLE late_one (id int)' },
      { version: 9000, name: 'gap', sql: 'CREATE TABLE gap_one (id int)' },
    ];
    expect(await migrate(db, [...all, extra[0]!])).toEqual([9001]);
    expect(await migrate(db, [...all, extra[1]!, extra[0]!])).toEqual([9000]);
    expect(await db.query('SELECT * FROM gap_one')).toEqual([]);
  });
});
