// GET /api/events/stream: the caller's node events as Server-Sent Events, as they commit, for every
// node of theirs. Each message is `id: <cursor>`, `event: <eventType>`, `data: <NodeEvent JSON>`;
// a reconnect with Last-Event-ID (browsers send it by themselves) or `?after=` gets exactly what
// it missed. The events come from the database through the process's one poller (events/event-hub.ts).
// The credential is checked again when its member is removed or their role changes (at once in this
// process, within a second from another replica: events/member-watch.ts) and every minute besides
// (a revoked token, an ended session).
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { stillAuthenticated, userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import type { EventSink, EventSubscription } from '../../events/event-hub.ts';
import { SseStream } from './sse-stream.ts';
import { allowsNode, type TokenScope } from '../../accounts/token-scope.ts';

// The stream's credential is checked again every this many heartbeats (every minute by default).
const RECHECK_EVERY_HEARTBEATS = 4;

const StreamQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({ maxLength: 128, description: 'Resume after this event cursor, for clients that cannot send Last-Event-ID; the header wins when both are sent.' }),
    ),
  },
  { additionalProperties: false },
);
type StreamQuery = Static<typeof StreamQuery>;

export function streamEventsRoute(app: FastifyInstance, { nodeEvents, eventHub, eventStreamBuffer, memberWatch }: ApiDeps) {
  app.get<{ Querystring: StreamQuery }>(
    '/api/events/stream',
    {
      // A HEAD would open a stream only to throw it away.
      exposeHeadRoute: false,
      schema: {
        operationId: 'streamEvents',
        summary: "Follow your nodes' events (Server-Sent Events)",
        description:
          'A `text/event-stream` of every event about the caller\'s nodes from the moment it is connected: `id: <cursor>`, ' +
          '`event: <eventType>`, `data: <NodeEvent as JSON>` per event, a `: keep-alive` comment every 15 s, `retry: 2000` first. ' +
          'Reconnect with the `Last-Event-ID` header (EventSource does it by itself) or `?after=<cursor>` to get exactly the events ' +
          'missed, none twice. A client that leaves 256 events (or 1 MiB) unread is disconnected, and the stream ends when the ' +
          'replica shuts down or the credential stops being valid (within a second of the member\'s removal; within a minute of a token\'s ' +
          'revocation or a session\'s end): reconnect and resume. At most 20 streams per user (429 rate_limited) ' +
          'and 5,000 per replica (503 service_unavailable) by default.',
        tags: ['events'],
        querystring: StreamQuery,
        response: {
          200: {
            description: 'The event stream.',
            content: { 'text/event-stream': { schema: { type: 'string', description: 'Server-Sent Events.' } } },
          },
          400: errorResponses[400],
          401: errorResponses[401],
          429: Type.Ref('Error'),
          503: Type.Ref('Error'),
        },
      },
    },
    async (request, reply) => {
      const user = userOf(request);
      const header = request.headers['last-event-id'];
      const [cursor, name] = typeof header === 'string' && header !== '' ? [header, 'Last-Event-ID'] : [request.query.after, 'after'];
      const resumeAfter = cursor === undefined ? null : await nodeEvents.resumePosition(user.accountId, cursor, name);

      let heartbeats = 0;
      let subscription: EventSubscription | undefined;
      const recheck = () =>
        void stillAuthenticated(request).then((valid) => {
          if (valid) return;
          subscription?.close();
          stream.end('signed-out');
        });
      const stream: SseStream = new SseStream(eventStreamBuffer, () => {
        if (++heartbeats % RECHECK_EVERY_HEARTBEATS === 0) recheck();
      });
      subscription = await eventHub.subscribe(user.accountId, resumeAfter, scopedSink(user.scope, stream));
      // A change while subscribing is still found: the watch compares with the role authenticated.
      const unwatch = memberWatch.watch(user.id, user.role, user.tokenId ?? undefined, recheck);
      stream.once('close', () => {
        unwatch();
        subscription?.close();
        if (stream.overflowed) request.log.info({ user: user.id }, 'event stream client disconnected: it left too many events unread');
      });
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        // Proxies that buffer answers (nginx) would hold the events back.
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
}

/** A token limited to some nodes follows only their events (token scopes: docs/API.md "Token scopes"). */
function scopedSink(scope: TokenScope, stream: SseStream): EventSink {
  if (scope.nodeIds === null) return stream;
  return {
    send(events) {
      const allowed = events.filter((e) => allowsNode(scope, e.nodeId));
      if (allowed.length > 0) stream.send(allowed);
    },
    heartbeat: () => stream.heartbeat(),
    end: (reason) => stream.end(reason),
    drained: () => stream.drained(),
  };
}
