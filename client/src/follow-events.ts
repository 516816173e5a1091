// Following the service's node events live: GET /api/events/stream, Server-Sent Events, one
// message per event (`id: <cursor>`, `event: <eventType>`, `data: <envelope>`). A dropped
// connection is opened again with `Last-Event-ID: <the last cursor>`, so no event is lost or
// repeated across reconnections; keep the cursor to resume after a restart too.
import { RlnCloudError, type RlnCloudClient, type WebhookEvent } from './client.ts';
import { parseEventStream } from './event-stream.ts';

export const EVENTS_STREAM_PATH = '/api/events/stream';

/** An event as the stream carries it: the webhook envelope with the event's id. */
export type NodeEvent = WebhookEvent & { eventId: string };

export interface FollowedEvent {
  /** Where the stream is after this event: pass it as `lastEventId` to resume after it. */
  cursor: string;
  event: NodeEvent;
}

export interface FollowOptions {
  /** Resume after this cursor (a FollowedEvent's); without it, the stream starts where the service starts it. */
  lastEventId?: string;
  /** Stops following: the iteration ends without an error. */
  signal?: AbortSignal;
  /** Wait before reconnecting, in ms (default 1 s); the server's `retry:` replaces it. */
  retryMs?: number;
}

// The route is typed once it is in the document; until then (and for the stream body, which
// openapi-fetch hands over unparsed) the call is made through this narrower view of GET.
type StreamGet = (
  path: string,
  init: { parseAs: 'stream'; headers: Record<string, string>; signal: AbortSignal },
) => Promise<{ data?: ReadableStream<Uint8Array> | null; error?: unknown; response: Response }>;

/**
 * The events, as they happen, until `signal` aborts or the loop stops. An error answer (401, 404,
 * ...) is thrown as an RlnCloudError; a failed connection, an answer of 5xx or a stream that ends
 * is retried after `retryMs`.
 */
export async function* followEvents(client: RlnCloudClient, options: FollowOptions = {}): AsyncGenerator<FollowedEvent> {
  let cursor = options.lastEventId;
  let retryMs = options.retryMs ?? 1000;
  if (options.signal?.aborted) return;
  const stop = new AbortController();
  const abort = () => stop.abort();
  options.signal?.addEventListener('abort', abort);
  const get = client.GET as unknown as StreamGet;
  try {
    while (!stop.signal.aborted) {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (cursor !== undefined) headers['last-event-id'] = cursor;
      let answer: Awaited<ReturnType<StreamGet>> | undefined;
      try {
        answer = await get(EVENTS_STREAM_PATH, { parseAs: 'stream', headers, signal: stop.signal });
      } catch {
        if (stop.signal.aborted) return;
      }
      if (answer && !answer.response.ok && answer.response.status < 500) throw new RlnCloudError(answer.response.status, answer.error);
      if (answer?.data) {
        const events = parseEventStream(answer.data, (ms) => (retryMs = ms));
        try {
          for (;;) {
            let next: IteratorResult<{ id: string | undefined; data: string }>;
            try {
              next = await events.next();
            } catch {
              break; // the connection broke: reconnect from the cursor
            }
            if (next.done) break;
            const { id, data } = next.value;
            if (id === undefined) throw new Error(`${EVENTS_STREAM_PATH} sent an event without an id`);
            cursor = id;
            yield { cursor: id, event: JSON.parse(data) as NodeEvent };
          }
        } finally {
          await events.return(undefined);
        }
      }
      if (stop.signal.aborted) return;
      await sleep(retryMs, stop.signal);
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    stop.abort();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
