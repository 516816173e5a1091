// VSS values past VSS_BLOB_THRESHOLD_BYTES live in the blob store (area `vss`), their rows holding
// the blob's key. Values this large are rare (a big channel monitor, a chunk of the RGB wallet
// archive); the common ones (monitor updates, the manager of a small node) stay in the row, one
// database round trip, because every channel update waits on its write.
import { randomBytes } from 'node:crypto';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobStore } from '../blobs/blob-store.ts';

// PostgreSQL stores a bytea of this size out of line (TOAST) at no real cost, and a put of 1,000
// such items is still a bounded transaction; past it, a row would make every read of the table's
// pages and every backup of the database carry megabytes of one node's state.
export const VSS_BLOB_THRESHOLD_BYTES = 256 * 1024;

export class VssBlobValues {
  constructor(private readonly blobs: BlobStore) {}

  /** Stores the value under a new key of the node's and answers the key. */
  async put(nodeId: string, value: Uint8Array): Promise<string> {
    const key = `${nodeId}/${randomBytes(16).toString('hex')}`;
    const dir = await mkdtemp(join(tmpdir(), 'rln-vss-'));
    try {
      const file = join(dir, 'value');
      await writeFile(file, value);
      await this.blobs.putFile(key, file, 'application/octet-stream');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return key;
  }

  async read(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.blobs.open(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Deletes values no row names any more; a failure leaves an orphan, never a row without its value. */
  async deleteAll(keys: Array<string | null>): Promise<void> {
    await Promise.allSettled(keys.filter((k): k is string => k !== null).map((k) => this.blobs.delete(k)));
  }
}
