// Storage files of nodes whose storage is a directory on this machine (the process runtime): plain
// file system calls. A write goes to a temporary name and is renamed into place once complete, so
// a reader never sees half a backup.
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, rm, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { CLIENT_BACKUP_PREFIX, CLIENT_BACKUPS_DIR, StorageFileMissingError, type NodeStorageFiles, type StorageMeasurement } from './types.ts';

export class LocalStorageFiles implements NodeStorageFiles {
  constructor(private readonly storageDir: (nodeId: string) => string) {}

  daemonPath(nodeId: string, name: string): string {
    return join(this.storageDir(nodeId), checkedName(name));
  }

  async read(nodeId: string, name: string): Promise<Readable> {
    const path = this.daemonPath(nodeId, name);
    // Opened before the stream is handed out, so a missing file is this call's error, not the stream's.
    const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new StorageFileMissingError(`node ${nodeId} has no file ${name} in its storage`);
      throw err;
    });
    return handle.createReadStream();
  }

  async write(nodeId: string, name: string, source: AsyncIterable<Uint8Array>): Promise<{ bytes: number }> {
    const path = this.daemonPath(nodeId, name);
    await mkdir(this.storageDir(nodeId), { recursive: true });
    const partial = `${path}.partial`;
    let bytes = 0;
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Uint8Array>) {
          for await (const chunk of chunks) {
            bytes += chunk.byteLength;
            yield chunk;
          }
        },
        createWriteStream(partial, { mode: 0o600 }),
      );
      await rename(partial, path);
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
    return { bytes };
  }

  async remove(nodeId: string, name: string): Promise<void> {
    await rm(this.daemonPath(nodeId, name), { force: true });
  }

  clientBackupPath(nodeId: string, name: string): string {
    return join(this.clientBackupsDir(nodeId), checkedName(name));
  }

  async prepareClientBackups(nodeId: string): Promise<void> {
    const target = this.clientBackupsDir(nodeId);
    await mkdir(target, { recursive: true, mode: 0o700 });
    const storage = this.storageDir(nodeId);
    const names = await readdir(storage).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [] as string[];
      throw err;
    });
    // Same volume: a rename, never a copy. Only files from before the move are there, never a name
    // already in the new folder; a daemon's unfinished temporary (`*.partial`) is its own to remove.
    for (const name of names) {
      if (name.startsWith(CLIENT_BACKUP_PREFIX) && !name.endsWith('.partial')) await rename(join(storage, name), join(target, name));
    }
  }

  async measure(nodeId: string): Promise<StorageMeasurement> {
    const nodeDir = dirname(this.storageDir(nodeId));
    const fs = await statfs(nodeDir);
    return { usedBytes: await diskUse(nodeDir), capacityBytes: fs.blocks * fs.bsize, availableBytes: fs.bavail * fs.bsize };
  }

  private clientBackupsDir(nodeId: string): string {
    return join(dirname(this.storageDir(nodeId)), CLIENT_BACKUPS_DIR);
  }
}

/**
 * Bytes on disk under `path`, as `du` counts them (allocated blocks, links not followed, each
 * hard-linked file once). A file removed during the walk is skipped.
 */
export async function diskUse(path: string, seen = new Set<string>()): Promise<number> {
  const stat = await lstat(path, { bigint: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!stat) return 0;
  const inode = `${stat.dev}:${stat.ino}`;
  if (seen.has(inode)) return 0;
  seen.add(inode);
  let bytes = Number(stat.blocks) * 512;
  if (stat.isDirectory()) {
    const names = await readdir(path).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
    for (const name of names) bytes += await diskUse(join(path, name), seen);
  }
  return bytes;
}

/** A storage file name: one path segment, so no caller can reach outside the node's storage. */
export function checkedName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw new Error(`not a storage file name: ${JSON.stringify(name)}`);
  return name;
}
