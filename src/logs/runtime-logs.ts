// Where a runtime's daemon output is read, chosen where the runtime is built (runtime/), and the
// one place that turns it into what log exports read (nodeLogsOf): composition does not ask which
// runtime it has. Declared here, beside its users, so runtime/ depends on logs/ and not back.
import type { Database } from '../db/database.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { Logger } from '../logger.ts';
import type { LogRange } from './read-range.ts';
import type { NodeLogFollower } from './node-log-follower.ts';
import { collectedLogReader, type NodeLogReader } from './collected-logs.ts';
import { NodeLogCollection } from './node-log-collection.ts';
import { SegmentJanitor } from './segment-janitor.ts';
import type { LogsConfig } from './settings.ts';

export type RuntimeLogs =
  /**
   * Kept in files of this machine (process): `read` gives the output received in [range.from,
   * range.to), oldest first, as lines `<ISO time received> <stream> <line>`; streamed, never loaded
   * whole (log exports read 100s of MB).
   */
  | { readonly kind: 'files'; read(nodeId: string, range: LogRange): AsyncIterable<Buffer> }
  /**
   * Readable only while the daemon's container exists (Kubernetes pod logs): followed for the nodes
   * this replica is told to (node-log-collection.ts) and stored where every replica reads it.
   */
  | { readonly kind: 'followed'; readonly follower: NodeLogFollower };

export interface NodeLogsDeps {
  db: Database;
  /** The `node-logs` area of the blob store (collected segments). */
  blobs: BlobStore;
  /** This replica's name (the log claims' holder). */
  holder: string;
  config: { dataDir: string; logs: LogsConfig };
  log: Logger;
}

/** What log exports read, and the long-running parts that collect and expire the output (none for files). */
export interface NodeLogs {
  reader: NodeLogReader;
  parts: Array<NodeLogCollection | SegmentJanitor>;
}

/**
 * One export path, two sources: the runtime's files (one machine, the laptop default), or the
 * segments every replica shares where the output is followed and collected once (Kubernetes).
 */
export function nodeLogsOf(logs: RuntimeLogs, { db, blobs, holder, config, log }: NodeLogsDeps): NodeLogs {
  switch (logs.kind) {
    case 'files':
      return { reader: { readLogs: (nodeId, range) => logs.read(nodeId, range) }, parts: [] };
    case 'followed':
      return {
        reader: collectedLogReader(db, blobs),
        parts: [
          new NodeLogCollection({ db, blobs, follower: logs.follower, holder, config, log }),
          new SegmentJanitor({ db, blobs, config, log }),
        ],
      };
  }
}
