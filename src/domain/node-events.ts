// Node events: what happened to a node, as webhooks deliver it (the envelope) and the API
// documents it. Recorded by db/node-events.ts in the transaction of the change they describe.

export const NODE_EVENT_TYPES = [
  'NODE_STATUS_UPDATED',
  'NODE_LOCKED',
  'NODE_UNLOCKED',
  'NODE_UPGRADE_AVAILABLE',
  'NODE_UPGRADE_COMPLETED',
  'NODE_UPGRADE_FAILED',
  /** The service turned automatic unlock off by itself: details.reason (nodes/unlock/auto-unlock.ts). */
  'NODE_AUTO_UNLOCK_DISABLED',
  'LOG_EXPORT_READY',
  'NODE_BACKUP_COMPLETED',
  'NODE_BACKUP_FAILED',
  /**
   * The export's final backup succeeded: the node is EXPORTED and stopped for good, its wallet lives
   * only in the customer's copy. details: backupId, sizeBytes, sha256.
   */
  'NODE_EXPORTED',
  /**
   * After an unlock the node reported a node pubkey another live node of the service reports too:
   * one wallet on two nodes (nodes/unlock/node-identity.ts). details: pubkey, sharedWith (your nodes),
   * otherAccounts (how many nodes of other accounts).
   */
  'NODE_IDENTITY_SHARED',
  /**
   * The node's volume is gone (nodes/storage-lost.ts): the node is STORAGE_LOST until a recover.
   * details: reason (words), detectedBy ('volume': the runtime found the volume missing;
   * 'daemon': the initialised node answered as never initialised).
   */
  'NODE_STORAGE_LOST',
  'TEST',
] as const;
export type NodeEventType = (typeof NODE_EVENT_TYPES)[number];

export interface NodeEventEnvelope {
  eventType: NodeEventType;
  eventTimestamp: string;
  nodeId: string;
  details: Record<string, unknown> & { nodeId: string };
}
