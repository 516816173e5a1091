// Reads a node's output collected in segments (node-log-collection.ts) for a time range: the
// segments the database lists for the node, in `seq` order, from the blob store every replica
// shares. The list is fixed when the read starts, so every replica exporting the same node at the
// same moment reads the same bytes; a segment deleted by retention since the listing is skipped.
import type { Readable } from 'node:stream';
import type { Database } from '../db/database.ts';
import { listNodeLogSegments } from '../db/node-log-segments.ts';
import { BlobMissingError, type BlobStore } from '../blobs/blob-store.ts';
import { filterLines, iso, type LogRange } from './read-range.ts';

/** Where an export reads a node's collected output from: the runtime's files, or segments. */
export interface NodeLogReader {
  readLogs(nodeId: string, range: LogRange): AsyncIterable<Buffer>;
}

export function collectedLogReader(db: Database, blobs: BlobStore): NodeLogReader {
  return { readLogs: (nodeId, range) => readCollectedLogs(db, blobs, nodeId, range) };
}

export async function* readCollectedLogs(db: Database, blobs: BlobStore, nodeId: string, range: LogRange = {}): AsyncGenerator<Buffer, void, undefined> {
  const from = range.from ? iso(range.from) : undefined;
  const to = range.to ? iso(range.to) : undefined;
  for (const segment of await listNodeLogSegments(db, nodeId, range)) {
    let body: Readable;
    try {
      body = await blobs.open(segment.blobKey);
    } catch (err) {
      if (err instanceof BlobMissingError) continue;
      throw err;
    }
    const inside = (!range.from || segment.firstAt >= range.from) && (!range.to || segment.lastAt < range.to);
    if (inside) {
      for await (const chunk of body) yield chunk as Buffer;
    } else if (yield* filterLines(chunksOf(body), from, to)) {
      return;
    }
  }
}

async function* chunksOf(body: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) yield chunk as Buffer;
  } finally {
    body.destroy();
  }
}
