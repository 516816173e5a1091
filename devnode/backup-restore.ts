// POST /restore's work. The backup is decrypted as a stream into a staging directory inside the
// storage; only once the GCM tag has verified (at the very end) and the staged wallet opens with the
// password are the files moved into place, the wallet state file last, in one atomic rename: until
// then the node is not initialized, and any failure puts back what was there and removes the
// staging directory. The backup file itself is left alone (the service removes it).
import { createDecipheriv, timingSafeEqual } from 'node:crypto';
import { lstat, mkdir, mkdtemp, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { ArchiveExtractor, syncDirectory } from './backup-archive.ts';
import { CIPHER, CorruptBackupError, decodeHeader, deriveBackupKeys, HEADER_BYTES, TAG_BYTES } from './backup-format.ts';
import { locateBackup, STAGING_PREFIX } from './backup-path.ts';
import { RlnError } from './errors.ts';
import type { Logger } from './log.ts';
import { STATE_FILE_NAME, StateFile, StateFileError } from './state.ts';
import { openMnemonic } from './wallet-crypto.ts';

const CHUNK_BYTES = 1024 * 1024;

export interface RestoreResult {
  path: string;
  files: number;
  bytes: number;
}

export async function restoreBackup(storageDir: string, backupPath: string, password: string, log: Logger): Promise<RestoreResult> {
  const notFound = () => new RlnError('InvalidRequest', `backup file not found: ${resolve(backupPath)}`);
  const { storage, path: source } = await locateBackup(storageDir, backupPath, notFound);
  const handle = await openBackup(source, notFound);
  try {
    const { size } = await handle.stat();
    const headerBytes = await readAt(handle, 0, Math.min(HEADER_BYTES, size));
    const header = decodeHeader(headerBytes);
    const { passwordCheck, key } = await deriveBackupKeys(password, header.salt, header.cost);
    if (!timingSafeEqual(passwordCheck, header.passwordCheck)) throw new RlnError('WrongPassword');
    if (size < HEADER_BYTES + TAG_BYTES) throw new CorruptBackupError('no room for the authentication tag');

    await removeStaleStaging(storage);
    const staging = await mkdtemp(join(storage, STAGING_PREFIX));
    const unpacked = join(staging, 'files');
    const extractor = new ArchiveExtractor(unpacked);
    try {
      await mkdir(unpacked, { mode: 0o700 });
      const decipher = createDecipheriv(CIPHER, key, header.iv);
      decipher.setAAD(headerBytes);
      decipher.setAuthTag(await readAt(handle, size - TAG_BYTES, TAG_BYTES));
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      for (let position = HEADER_BYTES; position < size - TAG_BYTES; ) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, size - TAG_BYTES - position), position);
        if (bytesRead === 0) throw new CorruptBackupError('the file shrank while it was being read');
        await extractor.push(decipher.update(buffer.subarray(0, bytesRead)));
        position += bytesRead;
      }
      try {
        await extractor.push(decipher.final());
      } catch {
        throw new CorruptBackupError('authentication failed (damaged or cut short)');
      }
      extractor.finish();
      await checkStagedWallet(unpacked, password);
      await moveIntoPlace(unpacked, storage, join(staging, 'displaced'), source, log);
    } finally {
      await extractor.abort();
      await rm(staging, { recursive: true, force: true });
    }
    return { path: source, files: extractor.files, bytes: extractor.bytes };
  } finally {
    await handle.close();
  }
}

async function openBackup(source: string, notFound: () => RlnError): Promise<FileHandle> {
  const info = await lstat(source).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw notFound();
    throw err;
  });
  if (!info.isFile()) throw new RlnError('InvalidRequest', `backup_path is not a regular file: ${source}`);
  return open(source, 'r');
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(out, done, length - done, position + done);
    if (bytesRead === 0) throw new CorruptBackupError('the file ends early');
    done += bytesRead;
  }
  return out;
}

/** What RLN checks after unpacking: the restored wallet opens with the password given. */
async function checkStagedWallet(unpacked: string, password: string): Promise<void> {
  let state;
  try {
    state = StateFile.open(unpacked).load();
  } catch (err) {
    if (err instanceof StateFileError) throw new CorruptBackupError('the wallet state in the backup is damaged');
    throw err;
  }
  if (!state.initialized) throw new CorruptBackupError('the backup holds no initialized wallet');
  if ((await openMnemonic(state, password)) === undefined) throw new RlnError('WrongPassword');
}

/** A crash in the middle of an earlier restore leaves its staging directory behind. */
async function removeStaleStaging(storageDir: string): Promise<void> {
  for (const name of await readdir(storageDir)) {
    if (name.startsWith(STAGING_PREFIX)) await rm(join(storageDir, name), { recursive: true, force: true });
  }
}

/**
 * Renames each top-level restored entry into the storage (whatever held its name is moved aside
 * first), then the wallet state file: that last rename is the moment the node becomes initialized.
 * On a failure before it, every step is undone.
 */
async function moveIntoPlace(unpacked: string, storageDir: string, displaced: string, source: string, log: Logger): Promise<void> {
  const names = (await readdir(unpacked)).filter((name) => name !== STATE_FILE_NAME);
  for (const name of names) {
    const target = join(storageDir, name);
    if (source === target || source.startsWith(target + sep)) {
      throw new RlnError('InvalidRequest', `the backup holds ${name}, which would replace the backup file itself; place the backup file elsewhere`);
    }
  }
  await mkdir(displaced, { mode: 0o700 });
  const undo: Array<() => Promise<void>> = [];
  try {
    for (const name of names) {
      const target = join(storageDir, name);
      if (await lstat(target).then(() => true, () => false)) {
        await rename(target, join(displaced, name));
        undo.push(() => rename(join(displaced, name), target));
      }
      await rename(join(unpacked, name), target);
      undo.push(() => rename(target, join(unpacked, name)));
    }
    await rename(join(unpacked, STATE_FILE_NAME), join(storageDir, STATE_FILE_NAME));
  } catch (err) {
    for (const step of undo.reverse()) {
      await step().catch((e: Error) => log.error(`restore: could not undo a step after a failure: ${e.message}`));
    }
    throw err;
  }
  await syncDirectory(storageDir);
}
