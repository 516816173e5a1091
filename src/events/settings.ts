// Configuration of the event stream (GET /api/events/stream), read by config.ts with the rest of
// the environment; it lives here beside the code that uses it.
import { duration, integer } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface EventStreamConfig {
  /**
   * Streams one process serves at once. An idle stream costs a socket and a few KiB (measured in
   * docs/BENCHMARKS.md), a stalled one at most its buffer: this keeps the worst case bounded.
   */
  maxStreams: number;
  /** Streams one user holds at once: a browser tab or a client each need one, a loop opening more is refused. */
  maxStreamsPerUser: number;
  /** Events a client may leave unread before it is disconnected (it resumes with Last-Event-ID). */
  bufferEvents: number;
  /** A comment line this often keeps proxies from closing an idle stream and finds dead peers. */
  heartbeatMs: number;
  /** How often new events of other replicas are looked for; this process's own wake the stream at once. */
  pollIntervalMs: number;
}

export const EVENT_STREAM_VARIABLES = {
  maxStreams: variable('EVENT_STREAMS_MAX', integer(1, 100_000), {
    default: '5000',
    doc: 'event streams (`GET /api/events/stream`) one process serves at once; more answer 503 `service_unavailable`',
  }),
  maxStreamsPerUser: variable('EVENT_STREAMS_PER_USER', integer(1, 10_000), {
    default: '20',
    doc: 'event streams one user may hold open at once; more answer 429 `rate_limited`',
  }),
  bufferEvents: variable('EVENT_STREAM_BUFFER_EVENTS', integer(1, 100_000), {
    default: '256',
    doc: 'events a stream client may leave unread (or 1 MiB) before it is disconnected; it resumes with `Last-Event-ID`',
  }),
  heartbeatMs: variable('EVENT_STREAM_HEARTBEAT', duration(100), {
    default: '15s',
    doc: "how often an event stream sends a comment line when idle, so proxies keep it open; the stream's credential is checked again every fourth",
  }),
  pollIntervalMs: variable('EVENT_STREAM_POLL', duration(50), {
    default: '1s',
    doc: "how often event streams look for other replicas' events (this process's own are sent at once)",
  }),
};

export function readEventStreamConfig(env: Env, problems: string[]): EventStreamConfig {
  return readEnv(EVENT_STREAM_VARIABLES, env, problems);
}
