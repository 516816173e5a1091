// What runs the node daemons. One interface covers a node's whole lifecycle; an implementation is
// chosen once at start-up (`process` on one machine; Kubernetes past it).
import type { Network } from '../domain/nodes.ts';
import type { RuntimeLogs } from '../logs/runtime-logs.ts';

/**
 * Each node's Biscuit root key (issue #40), as the runtime needs it: the public half for the daemon's
 * --root-public-key, created the first time it is asked for. A node created before keys existed
 * gets one at its next start; a daemon already running keeps its command line until it restarts
 * (secrets/node-root-keys.ts).
 */
export interface NodeRootKeys {
  publicKeyFor(nodeId: string): Promise<string>;
}

export interface NodeSpec {
  nodeId: string;
  network: Network;
  imageVersion: string;
  /** Ports handed out by the runtime at creation (see NodePorts); null where the runtime has none to give. */
  restPort: number | null;
  peerPort: number | null;
  /**
   * Continuous state (issue #43): the daemon is started with `--vss-url <its own VSS URL>`, asked
   * of the runtime's NodeVssUrls at each start (vss/node-urls.ts). Only where the release has it.
   */
  continuousState?: boolean;
}

/**
 * The host ports a node is given when it is created. The process runtime hands out a pair from
 * NODE_PORT_RANGE; on Kubernetes every pod has its own address and the daemon listens on fixed
 * ports, so there is nothing to hand out (null) and the peer port is learnt from its Service.
 */
/** Where a node with continuous state writes: its own VSS URL, the same at every start (vss/node-urls.ts). */
export interface NodeVssUrls {
  urlFor(nodeId: string): Promise<string>;
  /**
   * Frees the node's single-writer fence (`__rln_instance__`) in its store. Called by a runtime
   * only right before it starts a daemon of the node while it knows no other daemon of the node
   * runs (a crashed or killed daemon never released it, and the next one would refuse to unlock).
   * With `writtenBefore`, only a fence written before that moment: one a daemon started after it
   * took is kept.
   */
  releaseFence(nodeId: string, writtenBefore?: Date): Promise<void>;
}

export interface NodePorts {
  restPort: number | null;
  peerPort: number | null;
}

/**
 * Where Lightning peers reach a node (the SPEC's peerDNS and peerPort), as the node stores it: a
 * null host is the service's public host, a null port RLN's default (nodes/present.ts).
 */
export interface PeerAddress {
  host: string | null;
  port: number | null;
}

/**
 * `starting`: on its way without help, every object as it should be and the runtime itself bringing
 * the daemon up (Kubernetes: a StatefulSet that wants a pod its controller is creating, a pod
 * terminating before its successor, or pending its image). The reconcile loop leaves it alone and
 * counts no restart; everything else that reads a status treats it as not running.
 */
export type RuntimeState = 'running' | 'starting' | 'stopped' | 'missing';

export interface RuntimeStatus {
  state: RuntimeState;
  /** With `running` and `starting`: the version the daemon runs or is coming up on. */
  imageVersion?: string;
  pid?: number;
}

export interface NodeEndpoint {
  host: string;
  port: number;
}

/**
 * The ports nodes hold now, read inside `within`, the transaction that stores the new node (the
 * composition gives db/nodes.ts usedPorts, whose lock makes creations running at once pick one after
 * the other). A runtime that hands out host ports is given it when it is built; `within` is opaque to it.
 */
export type TakenPorts<Within> = (within: Within) => Promise<Set<number>>;

/**
 * Every member is required: what differs between runtimes is answered by each (its logs part, its
 * peer address), so no caller asks which runtime it has (src/architecture.test.ts keeps it so).
 * `Within`: what assignPorts reads the taken ports inside (TakenPorts).
 */
export interface NodeRuntime<Within = unknown> {
  /**
   * The ports a new node gets: a free pair of NODE_PORT_RANGE on the process runtime (from the
   * ports its TakenPorts query reads inside `within`), none on Kubernetes (null ports) unless its
   * peers use host ports. undefined when none are left.
   */
  assignPorts(within: Within): Promise<NodePorts | undefined>;
  /** Creates the node's storage. Idempotent. */
  provision(spec: NodeSpec): Promise<void>;
  /** Starts the daemon on spec.imageVersion; a daemon already running that version is kept. */
  start(spec: NodeSpec): Promise<void>;
  /** Stops the daemon gracefully, then forcefully; keeps storage. Idempotent. */
  stop(nodeId: string): Promise<void>;
  /** Stops the daemon and starts it again on another image version, keeping storage. */
  replaceImage(spec: NodeSpec): Promise<void>;
  /** Stops the daemon and deletes its storage and logs. Idempotent. */
  destroy(nodeId: string): Promise<void>;
  /**
   * Whether the node's volume is there (process: its storage directory; Kubernetes: its claim, bound
   * and not being deleted). Asked of every node that should run at each reconcile pass, so it answers
   * from what the runtime holds (a stat, a watch cache). A pod waiting to be scheduled still has its
   * volume: only the volume itself is looked at.
   */
  storagePresent(nodeId: string): Promise<boolean>;
  /**
   * Gives the node a fresh, empty volume (a recover, nodes/health/storage-lost.ts): stops the daemon and
   * waits until it is gone, removes what is left of the old volume and waits until that is gone too,
   * so no daemon ever writes to the old one again. The next start() runs on the new volume. Idempotent.
   */
  replaceStorage(spec: NodeSpec): Promise<void>;
  status(nodeId: string): Promise<RuntimeStatus>;
  /**
   * Whether status() would answer `running`, answered at once where the runtime knows without
   * asking anything (the gateways check it on every request).
   */
  runsDaemon(nodeId: string): boolean;
  /**
   * Every node whose status() would answer `running`, from what the runtime holds (no request): a
   * reconcile pass looks at these and at the nodes that should run, not at the whole fleet.
   */
  runningDaemons(): string[];
  /** Where the daemon's REST API answers. */
  endpoint(spec: NodeSpec): NodeEndpoint;
  /**
   * Waits until a daemon that start() or replaceImage() asked for is up as far as the runtime can
   * tell (a Kubernetes pod scheduled, its image pulled, its port open), failing early with the
   * reason when it cannot come up. Runtimes whose start() already returns a running daemon resolve at once.
   */
  awaitRunning(spec: NodeSpec, timeoutMs: number): Promise<void>;
  /**
   * Where Lightning peers reach the node, recorded when a daemon has started: the service's public
   * host and the peer port the node was given (process), or what its Kubernetes Service says.
   */
  peerAddress(spec: NodeSpec): PeerAddress;
  /** Whether the runtime's view of its nodes is current (the Kubernetes watches are synced; always, for local processes). */
  isReady(): boolean;
  /**
   * Files in the node's storage, for backups and restores: the daemon writes a backup to a path
   * on its own disk (RLN's POST /backup {backup_path}) and reads one from there (POST /restore).
   * `name` is a plain file name (no slash) directly inside the daemon's storage directory.
   */
  storageFiles: NodeStorageFiles;
  /** The last lines the daemon wrote, for error messages and diagnostics. */
  tailLog(nodeId: string, maxBytes?: number): Promise<string>;
  /** Where the daemons' output is read: files of this machine (process), or followed to be collected (Kubernetes). */
  readonly logs: RuntimeLogs;
  /**
   * True when every start or end of a daemon the runtime did not ask for is reported through
   * onUnexpectedExit (Kubernetes restarts containers itself and repairs objects without touching
   * a running pod): then a repair by start() is not assumed to have restarted the daemon.
   */
  readonly reportsEveryRestart: boolean;
  /** Called with a node id whenever a daemon exits without being asked to. */
  onUnexpectedExit(listener: (nodeId: string, detail: string) => void): void;
  /** Releases the runtime's own resources; the process runtime stops the daemons it started. */
  shutdown(): Promise<void>;
}

/** A node's storage as the service reaches it: streamed both ways, never loaded whole. */
export interface NodeStorageFiles {
  /** The absolute path of `name` as the daemon sees it (what goes into backup_path). */
  daemonPath(nodeId: string, name: string): string;
  /** The file's bytes; rejects with a StorageFileMissingError when it does not exist. */
  read(nodeId: string, name: string): Promise<import('node:stream').Readable>;
  /** Writes the file (replacing one of that name) from `source`, complete or not at all. */
  write(nodeId: string, name: string, source: AsyncIterable<Uint8Array>): Promise<{ bytes: number }>;
  /** Removes the file; no error when it is not there. */
  remove(nodeId: string, name: string): Promise<void>;
  /**
   * The absolute path, as the daemon sees it, of a backup a client keeps on the node (the gateways'
   * backup_path): in CLIENT_BACKUPS_DIR beside the storage directory, on the same volume, because RLN
   * archives its whole storage directory into every backup and one kept inside would be in the next.
   */
  clientBackupPath(nodeId: string, name: string): string;
  /**
   * Makes sure CLIENT_BACKUPS_DIR exists and holds the client backups an older version of the service
   * kept in the storage directory itself (moved, same names). Idempotent; the daemon must be running
   * where the storage is reachable only through it (Kubernetes).
   */
  prepareClientBackups(nodeId: string): Promise<void>;
  /**
   * What the node's files take (its storage, client backups and, on the process runtime, its logs)
   * and the size and free space of the file system they are on. Kubernetes: the daemon must run.
   */
  measure(nodeId: string): Promise<StorageMeasurement>;
}

export interface StorageMeasurement {
  usedBytes: number;
  capacityBytes: number;
  availableBytes: number;
}

/** The folder beside a node's storage directory (same parent, same volume) that holds client backups. */
export const CLIENT_BACKUPS_DIR = 'client-backups';
/** The prefix of the client backups' file names (nodes/paths/backup-path.ts): what is moved out of the storage directory. */
export const CLIENT_BACKUP_PREFIX = 'rln-cloud-backup-user-';

/** A storage file that is not there (a backup the daemon did not write, a node without storage). */
export class StorageFileMissingError extends Error {}

