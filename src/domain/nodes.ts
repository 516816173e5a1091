// The words of a node, shared by every layer: the database stores them, the lifecycle table
// decides between them, the runtime and the API speak them. They import nothing.

// Each set of words is listed once, as a list (the API's schemas and the migrations' CHECK
// constraints follow it); its type is derived from the list.
// EXPORTED: the node's wallet left with its owner (POST /api/nodes/{id}/export); it never runs here again.
// STORAGE_LOST: the node's volume is gone (nodes/storage-lost.ts); it waits for POST /api/nodes/{id}/recover.
export const NODE_STATUSES = ['STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST', 'EXPORTED', 'DESTROYING', 'DESTROYED'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];
export type DesiredState = 'running' | 'stopped' | 'destroyed';
export const NETWORKS = ['regtest', 'testnet'] as const;
export type Network = (typeof NETWORKS)[number];

export interface NodeSettings {
  webhookUrl?: string;
}

/** A node: what its user asked for (desiredState) and what is true now (status). Mapped from its row by db/nodes.ts. */
export interface Node {
  id: string;
  userId: string;
  name: string;
  network: Network;
  status: NodeStatus;
  desiredState: DesiredState;
  locked: boolean;
  initialized: boolean;
  imageVersion: string;
  settings: NodeSettings;
  /** Host ports from the process runtime; null on runtimes that give none (Kubernetes). */
  restPort: number | null;
  peerPort: number | null;
  peerHost: string | null;
  /** The wallet password sealed for automatic unlock (secrets/unlock-seal.ts); null: off. Never shown. */
  autoUnlockSealed: string | null;
  /** Continuous state: the daemon writes every state change to the service's VSS (domain/release-features.ts, docs/VSS.md). */
  continuousState: boolean;
  /** The node a restore of this node's wallet went into: this one is stopped for good (nodes/lifecycle.ts). */
  supersededBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  destroyedAt: Date | null;
  /** Its storage use as last measured (nodes/upkeep/storage-meter.ts); null until the first measurement. */
  storage: NodeStorageUse | null;
  /** What its VSS store holds, as last measured (vss/vss-janitor.ts); null while it has none measured. */
  vss: NodeVssUse | null;
}

/** The bytes of the values in a node's VSS store (docs/VSS.md), at one moment. */
export interface NodeVssUse {
  usedBytes: number;
  measuredAt: Date;
}

/** What a node's files take and the room on the volume they are on, at one moment. */
export interface NodeStorageUse {
  /** Bytes the node's files take on disk (du of its folder on the process runtime, of its volume on Kubernetes). */
  usedBytes: number;
  /** The size of the file system they are on: the node's volume on Kubernetes, DATA_DIR's on the process runtime. */
  capacityBytes: number;
  /** Bytes still free on that file system. */
  availableBytes: number;
  measuredAt: Date;
}

/**
 * What a build does to a node's daemon. recover: the old daemon stopped, a fresh empty volume, the
 * daemon started on it. restart: the daemon stopped and started again as it is, now with RLN's
 * authentication (the authentication rollout, nodes/rollout/authentication-rollout.ts).
 */
export const BUILD_ACTIONS = ['create', 'start', 'stop', 'upgrade', 'destroy', 'recover', 'restart'] as const;
export type BuildAction = (typeof BUILD_ACTIONS)[number];
export const BUILD_STATUSES = ['IN_PROGRESS', 'SUCCESS', 'FAILURE'] as const;
export type BuildStatus = (typeof BUILD_STATUSES)[number];

/**
 * What a build in progress is doing now, step by step as nodes/builds/build-job.ts carries it out
 * (stored, migration 0018). QUEUED: recorded, waiting for a worker. A finished build's phase is
 * its outcome: DONE or FAILED.
 */
export const BUILD_STEPS = [
  'PROVISIONING', 'STARTING_DAEMON', 'REPLACING_IMAGE', 'WAITING_FOR_DAEMON', 'RESTORING_BACKUP', 'ROLLING_BACK', 'STOPPING_DAEMON', 'DESTROYING',
  'REPLACING_VOLUME',
] as const;
export type BuildStep = (typeof BUILD_STEPS)[number];
export const BUILD_PHASES = ['QUEUED', ...BUILD_STEPS, 'DONE', 'FAILED'] as const;
export type BuildPhase = (typeof BUILD_PHASES)[number];

/** One thing the control plane did or does to a node's daemon, numbered per node. Mapped from its row by db/builds.ts. */
export interface Build {
  nodeId: string;
  buildNumber: number;
  action: BuildAction;
  status: BuildStatus;
  imageVersion: string;
  /** What the node ran before (an upgrade's rollback target); null where nothing ran before. */
  previousImageVersion: string | null;
  error: string | null;
  /** The step a build in progress is on (nodes/builds/build-job.ts); null before the first, and kept once finished. */
  phase: BuildStep | null;
  startedAt: Date;
  finishedAt: Date | null;
}

/** The phase a build shows: its outcome once finished, else the step it is on (QUEUED before the first). */
export function buildPhaseOf(status: BuildStatus, step: BuildStep | null): BuildPhase {
  if (status === 'SUCCESS') return 'DONE';
  if (status === 'FAILURE') return 'FAILED';
  return step ?? 'QUEUED';
}
