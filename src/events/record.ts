// Node events: what happened to a node, recorded in the caller's transaction so an event exists
// exactly when its change does. Webhook delivery reads them from the node_events table.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

export const NODE_EVENT_TYPES = [
  'NODE_STATUS_UPDATED',
  'NODE_LOCKED',
  'NODE_UNLOCKED',
  'NODE_UPGRADE_AVAILABLE',
  'NODE_UPGRADE_COMPLETED',
  'NODE_UPGRADE_FAILED',
  'LOG_EXPORT_READY',
  'TEST',
] as const;
export type NodeEventType = (typeof NODE_EVENT_TYPES)[number];

export interface NodeEventEnvelope {
  eventType: NodeEventType;
  eventTimestamp: string;
  nodeId: string;
  details: Record<string, unknown> & { nodeId: string };
}

export interface RecordedEvent {
  id: number;
  eventId: string;
  envelope: NodeEventEnvelope;
}

export async function recordNodeEvent(
  tx: Queryable,
  node: { id: string; user_id: string },
  eventType: NodeEventType,
  details: Record<string, unknown> = {},
): Promise<RecordedEvent> {
  const envelope: NodeEventEnvelope = {
    eventType,
    eventTimestamp: new Date().toISOString(),
    nodeId: node.id,
    details: { nodeId: node.id, ...details },
  };
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  const [row] = await tx.query<{ id: number }>(
    `INSERT INTO node_events (event_id, node_id, user_id, event_type, payload) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [eventId, node.id, node.user_id, eventType, JSON.stringify(envelope)],
  );
  return { id: Number(row!.id), eventId, envelope };
}
