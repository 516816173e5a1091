// Moving backup files between a node's storage and the backup blob store, streamed with bounded
// memory: a node's storage may hold hundreds of MB. On the way out the file is staged on the
// service's disk (the blob stores take a file of known length) while its SHA-256 and size are taken.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { NodeStorageFiles } from '../runtime/types.ts';

/** The name of a backup's file in the node's storage, while the node writes or reads it. */
export const nodeFileName = (backupId: string) => `rln-cloud-backup-${backupId}`;

/** Where a backup is kept in the backup blob store: under its node, or under uploads/. */
export const backupBlobKey = (backupId: string, nodeId: string | null) => `${nodeId ?? 'uploads'}/${backupId}.rlnbackup`;

export const backupStagingDir = (dataDir: string) => join(dataDir, 'backups', 'staging');

export interface StoredFile {
  sizeBytes: number;
  sha256: string;
}

/** Stages `source` under DATA_DIR while hashing it, then hands the file to the blob store under `key`. */
export async function storeBackupFile(
  source: AsyncIterable<Uint8Array>,
  to: { blobs: BlobStore; key: string; dataDir: string; stagingName: string; maxBytes?: number },
): Promise<StoredFile> {
  const dir = backupStagingDir(to.dataDir);
  await mkdir(dir, { recursive: true });
  const staged = join(dir, to.stagingName);
  const hash = createHash('sha256');
  let sizeBytes = 0;
  const file = createWriteStream(staged, { mode: 0o600 });
  try {
    await pipeline(
      source,
      async function* (chunks: AsyncIterable<Uint8Array>) {
        for await (const chunk of chunks) {
          sizeBytes += chunk.byteLength;
          if (to.maxBytes !== undefined && sizeBytes > to.maxBytes) throw new TooLargeError(to.maxBytes);
          hash.update(chunk);
          yield chunk;
        }
      },
      file,
    );
    await to.blobs.putFile(to.key, staged, 'application/octet-stream');
    return { sizeBytes, sha256: hash.digest('hex') };
  } finally {
    // A source that fails at once (too large in its first chunk) can fail before the file is even
    // open: the stream then opens it and closes it after that. Removing it before that would leave
    // the file behind.
    // A pipeline that failed on its source may leave the file stream open, waiting for more:
    // destroyed here, it closes (and the file can go) whatever failed.
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()).destroy());
    await rm(staged, { force: true });
  }
}

export class TooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than ${maxBytes} bytes`);
  }
}

/** Copies a stored backup into the node's storage under `name`, for the daemon's /restore. */
export async function placeBackupFile(blobs: BlobStore, key: string, files: NodeStorageFiles, nodeId: string, name: string) {
  return files.write(nodeId, name, await blobs.open(key));
}
