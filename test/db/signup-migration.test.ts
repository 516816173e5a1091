// Migration 0029 on a database that already had people: everyone who exists was typed in by the
// operator or accepted an invitation, so they count as verified and can still sign in; no account waits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../src/db/migrate.ts';
import { newId } from '../../src/auth/tokens.ts';
import type { Database } from '../../src/db/database.ts';
import { insertOwnAccount } from '../../src/db/users.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`people from before sign-up existed (migration 0029), on ${databaseLabel()}`, () => {
  let db: Database;
  let close: () => Promise<void>;
  const userId = newId();

  beforeAll(async () => {
    ({ db, close } = await openMigratedTestDb(24));
    await db.query(`INSERT INTO users (id, email) VALUES ($1, 'before@example.com')`, [userId]);
    await insertOwnAccount(db, userId, 'starter');
    await migrate(db, listMigrations());
  });
  afterAll(() => close?.());

  it('counts them as verified, with no account waiting for approval', async () => {
    const [row] = await db.query<{ email_verified_at: Date | null; awaiting_approval_since: Date | null }>(
      'SELECT u.email_verified_at, a.awaiting_approval_since FROM users u JOIN accounts a ON a.id = u.id WHERE u.id = $1',
      [userId],
    );
    expect(row!.email_verified_at).toBeInstanceOf(Date);
    expect(row!.awaiting_approval_since).toBeNull();
  });
});
