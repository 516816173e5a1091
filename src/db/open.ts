// Opening the configured database: PostgreSQL when DATABASE_URL is set, else PGlite in DATA_DIR.
import { join } from 'node:path';
import { openPglite, openPostgres, type Database } from './database.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';

/** Where the database is: DATABASE_URL, or PGlite under DATA_DIR when it is unset. */
export interface DatabaseLocation {
  databaseUrl: string | undefined;
  dataDir: string;
}

export async function openDatabase(config: DatabaseLocation): Promise<Database> {
  return config.databaseUrl ? openPostgres(config.databaseUrl) : openPglite(join(config.dataDir, 'pglite'));
}

export interface ServerDatabase {
  db: Promise<Database>;
  /** Releases the DATA_DIR lock (a no-op on PostgreSQL). */
  releaseLock: () => void;
}

/**
 * Takes the DATA_DIR lock (embedded database only) and starts opening the database, without
 * waiting: opening PGlite takes a few hundred milliseconds that the caller overlaps with loading
 * the rest of the service.
 */
export function openServerDatabase(config: DatabaseLocation): ServerDatabase {
  let releaseLock = () => {};
  if (!config.databaseUrl) {
    const lock = acquireDataDirLock(config.dataDir, 'server');
    if (!lock.acquired) {
      throw new Error(`another rln-cloud ${lock.holder.role} (pid ${lock.holder.pid}) holds ${config.dataDir}; stop it or choose another DATA_DIR`);
    }
    releaseLock = lock.release;
  }
  const db = openDatabase(config);
  db.catch(() => {}); // awaited by the caller; this only keeps an early failure from going unhandled
  return { db, releaseLock };
}
