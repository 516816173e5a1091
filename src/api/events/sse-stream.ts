// One event stream's response body in the Server-Sent Events format, with a bounded buffer.
// Messages wait in a queue of their own and move into the response only as fast as the client
// reads (the Readable is pulled by the response's pipe): a client that stops reading leaves them
// queued, and when more arrive while more than the bound wait, it is disconnected rather than
// held in memory. It resumes with Last-Event-ID, from the database. The bound is checked per
// batch, not per message, so a burst (one read of the database) never cuts off a client that
// reads: the queue holds at most the bound plus one batch.
import { Readable } from 'node:stream';
import type { EventSink, StreamedEvent, StreamEndReason } from '../../events/event-hub.ts';

export interface SseLimits {
  /** Messages (events and heartbeats) queued unread before the client is disconnected. */
  maxEvents: number;
  /** Bytes queued unread before the client is disconnected, whatever the count. */
  maxBytes: number;
}

/** What the stream tells the client before any event: reconnect after 2 s (the browser's default is 3 s or more). */
const PREAMBLE = 'retry: 2000\n\n';
const HEARTBEAT = ': keep-alive\n\n';

export class SseStream extends Readable implements EventSink {
  private queue: string[] = [PREAMBLE];
  private queuedBytes = PREAMBLE.length;
  private wanted = false;
  private ending = false;
  private endPushed = false;
  private drainWaiters: Array<() => void> = [];
  /** Set once the client was cut off for not reading (for the caller's log line). */
  overflowed = false;

  constructor(
    private readonly limits: SseLimits,
    private readonly onHeartbeat: () => void = () => {},
  ) {
    // A small internal buffer: what the client has not read stays in `queue`, where it is counted.
    super({ highWaterMark: 16 * 1024 });
  }

  send(events: StreamedEvent[]) {
    this.enqueue(events.map((e) => `id: ${e.cursor}\nevent: ${e.eventType}\ndata: ${e.json}\n\n`));
  }

  heartbeat() {
    if (this.destroyed || this.ending) return;
    this.enqueue([HEARTBEAT]);
    this.onHeartbeat();
  }

  /**
   * Ends the response once what is queued has gone (shutdown, a failed read, the credential ended),
   * or at once when the client was too slow.
   */
  end(reason: StreamEndReason | 'signed-out') {
    if (reason === 'behind') return this.cutOff();
    this.ending = true;
    this.pump();
  }

  drained(): Promise<void> {
    if (this.queue.length === 0 || this.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  override _read() {
    this.wanted = true;
    this.pump();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void) {
    this.queue = [];
    this.queuedBytes = 0;
    this.releaseDrainWaiters();
    callback(err);
  }

  private enqueue(messages: string[]) {
    if (this.destroyed || this.ending) return;
    if (this.queue.length > this.limits.maxEvents || this.queuedBytes > this.limits.maxBytes) return this.cutOff();
    for (const message of messages) {
      this.queue.push(message);
      this.queuedBytes += Buffer.byteLength(message);
    }
    this.pump();
  }

  private cutOff() {
    this.overflowed = true;
    // Destroying the body makes the server destroy the response: the connection closes at once.
    this.destroy();
  }

  private pump() {
    while (this.wanted && this.queue.length > 0) {
      const message = this.queue.shift()!;
      this.queuedBytes -= Buffer.byteLength(message);
      this.wanted = this.push(message);
    }
    if (this.queue.length === 0) {
      this.releaseDrainWaiters();
      if (this.ending && !this.endPushed) {
        this.endPushed = true;
        this.push(null);
      }
    }
  }

  private releaseDrainWaiters() {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
