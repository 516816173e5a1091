// Applies the numbered SQL files in ./migrations, each once, in order, on PGlite and PostgreSQL
// alike. An advisory lock keeps two replicas starting together from applying one file twice.
import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from './database.ts';
import { projectPath } from '../platform/paths.ts';

const MIGRATIONS_DIR = projectPath('src', 'db', 'migrations') + '/';
const LOCK_KEY = 727_001; // arbitrary, constant: identifies "rln-cloud migrations" among advisory locks

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(`${dir}${file}`, 'utf8'),
    }));
}

/** The schema version this code needs: the highest numbered migration it carries. */
export function latestMigrationVersion(migrations = listMigrations()): number {
  return Math.max(0, ...migrations.map((m) => m.version));
}

/** Returns the versions it applied (empty when the schema was already current). */
export async function migrate(db: Database, migrations = listMigrations()): Promise<number[]> {
  // Nearly every start finds every migration applied: one read then, no transaction or lock.
  if (await allApplied(db, migrations)) return [];
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

async function allApplied(db: Database, migrations: Migration[]): Promise<boolean> {
  try {
    const [row] = await db.query<{ applied: number }>('SELECT count(*)::int AS applied FROM schema_migrations WHERE version = ANY($1::int[])', [
      migrations.map((m) => m.version),
    ]);
    return row!.applied === migrations.length;
  } catch {
    return false; // no schema_migrations yet (a new database): the transaction creates it
  }
}
