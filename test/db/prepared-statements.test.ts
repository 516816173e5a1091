// Statements marked as prepared (database.ts preparedStatement) run on both databases, with new
// parameters on every execution, inside and outside transactions; a name stands for one text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatement, type Database } from '../../src/db/database.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

const DOUBLED = preparedStatement('test_doubled', 'SELECT $1::int * 2 AS doubled, $2::text AS label');

describe(`prepared statements on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb());
  });
  afterAll(() => close());

  it('executes again and again with each call’s parameters, on several connections at once', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => db.query<{ doubled: number; label: string }>(DOUBLED, [i, `n${i}`])));
    expect(answers.map(([row]) => [row!.doubled, row!.label])).toEqual(Array.from({ length: 12 }, (_, i) => [2 * i, `n${i}`]));
    const inTransaction = await db.transaction((tx) => tx.query<{ doubled: number }>(DOUBLED, [21, 'tx']));
    expect(inTransaction[0]!.doubled).toBe(42);
  });

  it('refuses one name declared with two texts, and accepts the same declaration twice', () => {
    expect(preparedStatement('test_doubled', 'SELECT $1::int * 2 AS doubled, $2::text AS label')).toBe(DOUBLED);
    expect(() => preparedStatement('test_doubled', 'SELECT 1')).toThrow(/declared twice/);
  });
});
