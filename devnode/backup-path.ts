// Where a backup file may be, and which storage files are not the node's data. RLN writes a backup
// wherever backup_path points, inside its container; devnode runs on the host, next to the service,
// and the gateway passes every path through, so devnode keeps backups inside its own storage
// directory or the client backups folder beside it (where the service's gateways put them, so they
// are not in every later backup) rather than let a client write or probe any path.
import { readdirSync, rmSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { RlnError } from './errors.ts';

/** The folder beside the storage directory where the service keeps its clients' backups (runtime/types.ts CLIENT_BACKUPS_DIR). */
export const CLIENT_BACKUPS_DIR = 'client-backups';

/** Where restores unpack before moving files into place (backup-restore.ts); never backed up. */
export const STAGING_PREFIX = '.devnode-restore-';

/**
 * Files that are not the node's data: backups (this one and any other the service left in the
 * storage), half-written uploads and temporaries (`*.partial`), restore staging directories.
 */
export function isExcludedName(name: string): boolean {
  return name.startsWith('rln-cloud-backup-') || name.endsWith('.partial') || name.startsWith(STAGING_PREFIX);
}

export interface BackupLocation {
  /** The storage directory, symbolic links resolved. */
  storage: string;
  /** The backup file, its directory's symbolic links resolved. */
  path: string;
}

/**
 * Resolves backup_path (a relative one from devnode's working directory, as RLN does) and checks it
 * lies in the storage directory or directly in the client backups folder beside it. `missingDirectory` is the error when its directory does not exist.
 */
export async function locateBackup(storageDir: string, backupPath: string, missingDirectory: (dir: string) => RlnError): Promise<BackupLocation> {
  if (backupPath === '') throw new RlnError('InvalidRequest', 'backup_path must not be empty');
  const given = resolve(backupPath);
  const dir = await realpath(dirname(given)).catch(() => undefined);
  if (dir === undefined || !(await stat(dir)).isDirectory()) throw missingDirectory(dirname(given));
  const storage = await realpath(storageDir);
  const clientBackups = join(dirname(storage), CLIENT_BACKUPS_DIR);
  if (dir !== storage && !dir.startsWith(storage + sep) && dir !== clientBackups) {
    throw new RlnError('InvalidRequest', `backup_path must be inside the node's storage directory ${storage} or in ${clientBackups}`);
  }
  return { storage, path: join(dir, basename(given)) };
}

/**
 * Removes what a devnode killed mid-backup or mid-restore left in its storage: its own temporaries
 * (`*.partial`) and restore staging directories. Called at start, when nothing of devnode's runs.
 */
export function removeInterruptedLeftovers(storage: string): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(storage)) {
    if (!name.endsWith('.partial') && !name.startsWith(STAGING_PREFIX)) continue;
    rmSync(join(storage, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
