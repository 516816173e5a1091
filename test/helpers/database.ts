// The database a test server runs on: embedded PGlite in the server's own DATA_DIR by default,
// or, when TEST_DATABASE_URL is set (CI's PostgreSQL pass), a fresh PostgreSQL database created
// for this server and dropped after it.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Queryable } from '../../src/db/database.ts';
import { insertOwnAccount, insertUser } from '../../src/db/users.ts';

export interface TestDatabase {
  url: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return { url: undefined, drop: async () => {} };
  const name = `rln_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export const databaseLabel = () => (process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite');

/**
 * A migrated database for tests that work below the HTTP layer; up to schema version `upTo` when
 * given (a test of a migration starts from the schema before it).
 */
export async function openMigratedTestDb(upTo?: number) {
  const { openPglite, openPostgres } = await import('../../src/db/database.ts');
  const { listMigrations, migrate } = await import('../../src/db/migrate.ts');
  const target = await createTestDatabase();
  const db = target.url ? await openPostgres(target.url) : await openPglite(undefined);
  await migrate(db, listMigrations().filter((m) => upTo === undefined || m.version <= upTo));
  return {
    db,
    async close() {
      await db.close();
      await target.drop();
    },
  };
}

/**
 * A user who owns an account of their own (id = the user's), as `user create` makes one. On a
 * database migrated only below accounts (migration 0020; the tests of earlier migrations), a user
 * with the plan as it was then stored.
 */
export async function insertOwnerUser(db: Queryable, id: string, email: string, plan = 'starter') {
  const [{ accounts }] = (await db.query<{ accounts: string | null }>(`SELECT to_regclass('accounts')::text AS accounts`)) as [{ accounts: string | null }];
  if (accounts === null) {
    await db.query('INSERT INTO users (id, email, plan) VALUES ($1, $2, $3)', [id, email, plan]);
    return { id, email };
  }
  // A database migrated only part of the way (the migration tests) has the users of its version.
  const [{ verifiable }] = (await db.query<{ verifiable: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'email_verified_at') AS verifiable`,
  )) as [{ verifiable: boolean }];
  if (verifiable) await insertUser(db, { id, email, passwordHash: null });
  else await db.query('INSERT INTO users (id, email) VALUES ($1, $2)', [id, email]);
  await insertOwnAccount(db, id, plan);
  return { id, email };
}
