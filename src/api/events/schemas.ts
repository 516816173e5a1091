// The node event as the timeline and the stream show it (events/present.ts).
import { Type } from '@sinclair/typebox';
import { NODE_EVENT_TYPES } from '../../domain/node-events.ts';

export const NodeEvent = Type.Object(
  {
    cursor: Type.String({ description: "This event's place: `after` of the timeline, the stream's `id:` line and Last-Event-ID. Opaque." }),
    eventId: Type.String({ description: 'The id of the event (`evt_...`), the `webhook-id` of its webhook deliveries.' }),
    eventType: Type.Union(NODE_EVENT_TYPES.map((t) => Type.Literal(t))),
    eventTimestamp: Type.String({ format: 'date-time', description: 'When the change happened.' }),
    nodeId: Type.String(),
    details: Type.Object(
      { nodeId: Type.String() },
      { additionalProperties: true, description: 'As webhooks send them: always nodeId; NODE_STATUS_UPDATED adds status and previousStatus; other types add their own fields.' },
    ),
  },
  {
    $id: 'NodeEvent',
    description: 'A node event: the webhook envelope `{eventType, eventTimestamp, nodeId, details}` with its `eventId` and `cursor`.',
  },
);
