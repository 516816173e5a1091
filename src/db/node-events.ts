// Node events: what happened to a node, recorded in the caller's transaction so an event exists
// exactly when its change does. A trigger queues each for webhook delivery (migration 0016); whatever
// inserts into node_events signals 'node-events' (see commit-signals.ts) so delivery starts at once.
import { randomUUID } from 'node:crypto';
import type { Queryable } from './database.ts';
import type { NodeEventEnvelope, NodeEventType } from '../domain/node-events.ts';
import { jsonParam } from './storable-text.ts';

export interface RecordedEvent {
  id: number;
  eventId: string;
  envelope: NodeEventEnvelope;
}

export interface NodeEventInput {
  node: { id: string; userId: string };
  eventType: NodeEventType;
  details?: Record<string, unknown>;
}

export async function recordNodeEvent(
  tx: Queryable,
  node: { id: string; userId: string },
  eventType: NodeEventType,
  details: Record<string, unknown> = {},
): Promise<RecordedEvent> {
  return (await recordNodeEvents(tx, [{ node, eventType, details }]))[0]!;
}

/** Records several events in one statement (a rollout pass starts many upgrades at once). */
export async function recordNodeEvents(tx: Queryable, events: NodeEventInput[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const eventTimestamp = new Date().toISOString();
  const recorded = events.map(({ node, eventType, details }) => ({
    eventId: `evt_${randomUUID().replaceAll('-', '')}`,
    node,
    envelope: { eventType, eventTimestamp, nodeId: node.id, details: { nodeId: node.id, ...details } } as NodeEventEnvelope,
  }));
  const rows = await tx.query<{ id: number }>(
    `INSERT INTO node_events (event_id, node_id, user_id, event_type, payload)
     SELECT e.event_id, e.node_id, e.user_id, e.event_type, e.payload::jsonb
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY
       AS e(event_id, node_id, user_id, event_type, payload, n)
     ORDER BY e.n
     RETURNING id`,
    [
      recorded.map((r) => r.eventId),
      recorded.map((r) => r.node.id),
      recorded.map((r) => r.node.userId),
      recorded.map((r) => r.envelope.eventType),
      recorded.map((r) => jsonParam(r.envelope)),
    ],
  );
  // The webhook dispatcher delivers them; it is woken once they have committed.
  tx.signalAfterCommit('node-events');
  // Identity values follow the insertion order, which ORDER BY e.n fixes.
  const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  return recorded.map((r, i) => ({ id: ids[i]!, eventId: r.eventId, envelope: r.envelope }));
}
