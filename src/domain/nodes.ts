// The words of a node, shared by every layer: the database stores them, the lifecycle table
// decides between them, the runtime and the API speak them. They import nothing.

export type NodeStatus = 'STARTING' | 'RUNNING' | 'IN_PROGRESS' | 'PAUSED' | 'FAILED' | 'DESTROYING' | 'DESTROYED';
export const NODE_STATUSES: NodeStatus[] = ['STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'DESTROYING', 'DESTROYED'];
export type DesiredState = 'running' | 'stopped' | 'destroyed';
export type Network = 'regtest' | 'testnet';

export interface NodeSettings {
  webhookUrl?: string;
}

/** What a build does to a node's daemon. */
export type BuildAction = 'create' | 'start' | 'stop' | 'upgrade' | 'destroy';
export type BuildStatus = 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';

/**
 * What a build in progress is doing now, step by step as nodes/build-job.ts carries it out
 * (stored, migration 0018). QUEUED: recorded, waiting for a worker. A finished build's phase is
 * its outcome: DONE or FAILED.
 */
export const BUILD_STEPS = [
  'PROVISIONING', 'STARTING_DAEMON', 'REPLACING_IMAGE', 'WAITING_FOR_DAEMON', 'RESTORING_BACKUP', 'ROLLING_BACK', 'STOPPING_DAEMON', 'DESTROYING',
] as const;
export type BuildStep = (typeof BUILD_STEPS)[number];
export const BUILD_PHASES = ['QUEUED', ...BUILD_STEPS, 'DONE', 'FAILED'] as const;
export type BuildPhase = (typeof BUILD_PHASES)[number];

/** The phase a build shows: its outcome once finished, else the step it is on (QUEUED before the first). */
export function buildPhaseOf(status: BuildStatus, step: BuildStep | null): BuildPhase {
  if (status === 'SUCCESS') return 'DONE';
  if (status === 'FAILURE') return 'FAILED';
  return step ?? 'QUEUED';
}
