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
