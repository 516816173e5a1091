// A node event as the timeline and the stream show it: the webhook envelope (what receivers of the
// node's webhooks get) with the event's id and its cursor.
import type { FeedEventRow } from '../db/node-event-feed.ts';
import { encodeEventCursor } from './event-cursor.ts';

export interface NodeEventView {
  /** Where this event sits: `after` of the timeline, the stream's `id:` and Last-Event-ID. */
  cursor: string;
  /** The webhook-id of the event's deliveries. */
  eventId: string;
  eventType: string;
  eventTimestamp: string;
  nodeId: string;
  details: Record<string, unknown>;
}

export function presentEvent(row: FeedEventRow): NodeEventView {
  const { eventTimestamp, details } = row.payload as { eventTimestamp: string; details: Record<string, unknown> };
  return {
    cursor: encodeEventCursor(row.position),
    eventId: row.eventId,
    eventType: row.eventType,
    eventTimestamp,
    nodeId: row.nodeId,
    // jsonb returns keys in its own order; nodeId first, as webhooks send it (webhooks/envelope.ts).
    details: { nodeId: row.nodeId, ...details },
  };
}
