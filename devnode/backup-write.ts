// POST /backup's work: the storage directory, archived (backup-archive.ts) and encrypted
// (backup-format.ts) in one pass into a temporary file beside the target, renamed into place once
// complete and synced. Memory stays flat whatever the storage holds: files are read in 1 MiB
// chunks straight into the cipher.
import { createCipheriv } from 'node:crypto';
import { lstat, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeEntryHeader, END_OF_ARCHIVE, syncDirectory, writeAll, type EntryHeader } from './backup-archive.ts';
import { CIPHER, DEFAULT_COST, deriveBackupKeys, encodeHeader, newHeaderSecrets } from './backup-format.ts';
import { isExcludedName, locateBackup } from './backup-path.ts';
import { RlnError } from './errors.ts';
import type { Logger } from './log.ts';

const CHUNK_BYTES = 1024 * 1024;

export interface BackupResult {
  path: string;
  files: number;
  bytes: number;
}

/** Writes the backup; the password must already have been checked against the wallet. */
export async function writeBackup(storageDir: string, backupPath: string, password: string, log: Logger): Promise<BackupResult> {
  const { storage, path: target } = await locateBackup(storageDir, backupPath, (dir) =>
    new RlnError('InvalidRequest', `the directory of backup_path does not exist: ${dir}`));
  // RLN refuses to overwrite anything at backup_path.
  if (await lstat(target).then(() => true, () => false)) throw new RlnError('InvalidBackupPath');

  const { salt, iv } = newHeaderSecrets();
  const { passwordCheck, key } = await deriveBackupKeys(password, salt, DEFAULT_COST);
  const header = encodeHeader({ cost: DEFAULT_COST, salt, iv, passwordCheck });
  const cipher = createCipheriv(CIPHER, key, iv);
  cipher.setAAD(header);

  const temp = `${target}.${process.pid}.partial`;
  const out = await open(temp, 'w', 0o600);
  const result = { path: target, files: 0, bytes: 0 };
  try {
    await writeAll(out, header);
    const emit = async (plain: Buffer) => {
      const encrypted = cipher.update(plain);
      if (encrypted.length > 0) await writeAll(out, encrypted);
    };
    const skip = new Set([target, temp]);
    for await (const entry of storageEntries(storage, '', skip, log)) {
      if (entry.kind === 'directory') {
        await emit(encodeEntryHeader(entry));
        continue;
      }
      const copied = await copyFile(entry, emit);
      if (copied !== undefined) {
        result.files += 1;
        result.bytes += copied;
      }
    }
    await emit(END_OF_ARCHIVE);
    await writeAll(out, cipher.final());
    await writeAll(out, cipher.getAuthTag());
    await out.sync();
    await out.close();
    // Only a complete, synced file ever carries the target's name.
    await rename(temp, target);
  } catch (err) {
    await out.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(dirname(target));
  return result;
}

interface StorageEntry extends EntryHeader {
  absolute: string;
}

/** The storage's directories and regular files, depth first, each directory before its content. */
async function* storageEntries(root: string, relative: string, skip: Set<string>, log: Logger): AsyncGenerator<StorageEntry> {
  const dir = join(root, relative);
  const names = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of names) {
    const absolute = join(dir, dirent.name);
    const path = relative === '' ? dirent.name : `${relative}/${dirent.name}`;
    if (skip.has(absolute) || isExcludedName(dirent.name)) continue;
    if (dirent.isDirectory()) {
      const { mode } = await stat(absolute);
      yield { kind: 'directory', path, mode, size: 0, absolute };
      yield* storageEntries(root, path, skip, log);
    } else if (dirent.isFile()) {
      yield { kind: 'file', path, mode: 0, size: 0, absolute };
    } else {
      // RLN's storage holds only files and directories; a symlink could point anywhere.
      log.warn(`backup: skipping ${path}, not a regular file or directory`);
    }
  }
}

/** Streams one file into the archive; its byte count, or undefined when it vanished meanwhile. */
async function copyFile(entry: StorageEntry, emit: (plain: Buffer) => Promise<void>): Promise<number | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(entry.absolute, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    // The size announced in the entry header is the size when opened; exactly that many bytes follow.
    const { size, mode } = await handle.stat();
    await emit(encodeEntryHeader({ kind: 'file', path: entry.path, mode, size }));
    const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(size, 1)));
    let done = 0;
    while (done < size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - done), done);
      if (bytesRead === 0) throw new Error(`${entry.path} shrank while it was being backed up`);
      await emit(buffer.subarray(0, bytesRead));
      done += bytesRead;
    }
    return size;
  } finally {
    await handle.close();
  }
}
