// The event streams of one process (GET /api/events/stream): every subscriber follows its user's
// node events. One shared poller reads each batch of new events once and fans it out to the
// subscribers of the users it concerns, so a thousand streams cost one query per wake, not one
// each. It wakes on the 'node-events' commit signal of this process and polls for other
// replicas'. Delivery is from the database, never from memory alone: a subscriber resuming after a
// position reads what it missed from there, then joins the live feed with no gap or duplicate.
import type { Database } from '../db/database.ts';
import { lastSettledPosition, readSettledEvents, readUserEventsBetween, type EventPosition, type FeedEventRow } from '../db/node-event-feed.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { comparePositions } from './event-cursor.ts';
import { presentEvent } from './present.ts';

/** One event on its way to the streams of its user; `json` is serialised once for all of them. */
export interface StreamedEvent {
  position: EventPosition;
  cursor: string;
  eventType: string;
  nodeId: string;
  json: string;
}

export type StreamEndReason = 'shutdown' | 'behind' | 'failed';

/** Where a subscriber's events go: the HTTP response (api/events/sse-stream.ts). */
export interface EventSink {
  /**
   * The next events, in order: one batch per read of the database, so a burst arrives whole. A sink
   * whose client has not read what it had bounds it: it disconnects rather than queue more.
   */
  send(events: StreamedEvent[]): void;
  /** Nothing happened for a while: proves the connection alive. */
  heartbeat(): void;
  /** The hub ends the stream; the client resumes with its last event id. */
  end(reason: StreamEndReason): void;
  /** Resolves once the client has taken what was sent, or the sink closed (paces a resume). */
  drained(): Promise<void>;
}

export interface EventHubOptions {
  db: Database;
  maxStreams: number;
  maxStreamsPerUser: number;
  /** Events a resuming subscriber may have waiting behind its catch-up before it is ended. */
  bufferEvents: number;
  heartbeatMs: number;
  pollIntervalMs: number;
  log: Logger;
}

// Events read per query by the poller and by a resume.
const BATCH = 500;
// How soon to look again for events held back behind a running transaction (doubling while it runs).
const HELD_BACK_FIRST_MS = 10;
const START: EventPosition = { tx: '0', id: 0 };

interface Subscriber {
  userId: string;
  sink: EventSink;
  /** The last event sent (or the position it started after): anything not after it is not sent. */
  lastSent: EventPosition;
  /** While resuming: live events that arrived meanwhile, sent once the catch-up is done. */
  waiting: StreamedEvent[] | null;
  ended: boolean;
}

export interface EventSubscription {
  /** Leaves the hub (the client went away). */
  close(): void;
}

export class EventHub {
  private readonly byUser = new Map<string, Set<Subscriber>>();
  private count = 0;
  private readonly loop: BackgroundLoop;
  private heartbeats: NodeJS.Timeout | undefined;
  private stopped = false;
  // The last event the poller has read. Unknown while nobody is subscribed (nothing is read then):
  // the first subscriber has it loaded, from the newest settled event.
  private position: EventPosition | undefined;
  private positionLoad: Promise<EventPosition> | undefined;
  // Changes when the position is forgotten, so a poll under way then does not write back a stale one.
  private generation = 0;
  private pollReads = 0;
  private heldBackDelay = HELD_BACK_FIRST_MS;
  private heldBackTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: EventHubOptions) {
    this.loop = new BackgroundLoop({ name: 'event stream poll', run: () => this.poll(), intervalMs: opts.pollIntervalMs, log: opts.log });
  }

  /** Streams open now in this process. */
  get streams(): number {
    return this.count;
  }

  /** Queries the shared poller has made so far (one per batch, whatever the number of streams). */
  get reads(): number {
    return this.pollReads;
  }

  start() {
    this.loop.start();
    this.heartbeats = setInterval(() => this.beat(), this.opts.heartbeatMs);
    this.heartbeats.unref();
  }

  /** Looks for new events now (this process committed some). */
  wake() {
    if (this.count > 0) this.loop.wake();
  }

  /** Ends every stream at once (clients reconnect elsewhere with Last-Event-ID) and refuses new ones. */
  async stop() {
    this.stopped = true;
    clearInterval(this.heartbeats);
    clearTimeout(this.heldBackTimer);
    for (const subscribers of this.byUser.values()) for (const s of subscribers) this.end(s, 'shutdown');
    await this.loop.stop();
  }

  /**
   * Follows the user's events from now, or after `resumeAfter` (an event of theirs). Refused at the
   * caps, and while shutting down; resolves once the stream is in place, so any event committed
   * after that reaches it.
   */
  async subscribe(userId: string, resumeAfter: EventPosition | null, sink: EventSink): Promise<EventSubscription> {
    if (this.stopped) throw new AppError('service_unavailable', 'this replica is shutting down; connect again');
    if (this.count >= this.opts.maxStreams) {
      throw new AppError('service_unavailable', `this replica serves its maximum of ${this.opts.maxStreams} event streams; retry later`, {
        limit: this.opts.maxStreams,
      });
    }
    const mine = this.byUser.get(userId) ?? new Set<Subscriber>();
    if (mine.size >= this.opts.maxStreamsPerUser) {
      throw new AppError('rate_limited', `you have ${mine.size} event streams open, the most allowed; close one first`, {
        limit: this.opts.maxStreamsPerUser,
      });
    }
    // Counted at once, before any wait, so the caps hold against a burst of connections.
    const subscriber: Subscriber = { userId, sink, lastSent: resumeAfter ?? START, waiting: resumeAfter ? [] : null, ended: false };
    this.byUser.set(userId, mine.add(subscriber));
    this.count++;
    const subscription = { close: () => this.leave(subscriber) };
    try {
      // Live events are those after the poller's position; a resume reads up to it first.
      const upTo = await this.ensurePosition();
      if (!resumeAfter) subscriber.lastSent = later(subscriber.lastSent, upTo);
      else void this.resume(subscriber, resumeAfter, upTo);
    } catch (err) {
      this.leave(subscriber);
      throw err;
    }
    return subscription;
  }

  private async ensurePosition(): Promise<EventPosition> {
    if (this.position) return this.position;
    const generation = this.generation;
    this.positionLoad ??= lastSettledPosition(this.opts.db).then(
      (found) => {
        if (generation === this.generation) this.position ??= found ?? START;
        return found ?? START;
      },
      (err: unknown) => {
        this.positionLoad = undefined;
        throw err;
      },
    );
    return this.positionLoad;
  }

  /** Sends a resuming subscriber what it missed, from the database, then what arrived meanwhile. */
  private async resume(s: Subscriber, after: EventPosition, upTo: EventPosition) {
    try {
      let from = after;
      while (!s.ended && comparePositions(from, upTo) < 0) {
        const rows = await readUserEventsBetween(this.opts.db, s.userId, from, upTo, BATCH);
        this.deliver(s, rows.map(streamedEvent));
        if (rows.length < BATCH) break;
        from = rows.at(-1)!.position;
        // Pace a long catch-up by the client's reading rather than buffering it all.
        await s.sink.drained();
      }
    } catch (err) {
      this.opts.log.warn({ err, user: s.userId }, 'an event stream could not read the events it missed; the client will reconnect');
      this.end(s, 'failed');
      return;
    }
    const waiting = s.waiting ?? [];
    s.waiting = null;
    this.deliver(s, waiting);
  }

  private async poll() {
    if (this.count === 0) return;
    const generation = this.generation;
    let from = await this.ensurePosition();
    for (;;) {
      this.pollReads++;
      const { rows, heldBack } = await readSettledEvents(this.opts.db, from, BATCH);
      if (generation !== this.generation) return;
      this.fanOut(rows);
      if (rows.length > 0) this.position = from = rows.at(-1)!.position;
      if (rows.length === BATCH && !this.loop.stopping) continue;
      this.lookAgainIfHeldBack(heldBack, rows.length > 0);
      return;
    }
  }

  /**
   * Events held back behind a running transaction become readable when it ends, which wakes
   * nobody when it recorded no event itself (or ran on another replica): rather than wait for the
   * poll, look again shortly, less often the longer it runs.
   */
  private lookAgainIfHeldBack(heldBack: boolean, progressed: boolean) {
    clearTimeout(this.heldBackTimer);
    if (!heldBack || this.stopped) {
      this.heldBackDelay = HELD_BACK_FIRST_MS;
      return;
    }
    this.heldBackDelay = progressed ? HELD_BACK_FIRST_MS : Math.min(this.heldBackDelay * 2, this.opts.pollIntervalMs);
    this.heldBackTimer = setTimeout(() => this.wake(), this.heldBackDelay);
    this.heldBackTimer.unref();
  }

  /** Hands each user's events of a batch to their subscribers, serialised once per event. */
  private fanOut(rows: FeedEventRow[]) {
    const byUser = new Map<string, StreamedEvent[]>();
    for (const row of rows) {
      if (!this.byUser.has(row.userId)) continue;
      const events = byUser.get(row.userId) ?? [];
      events.push(streamedEvent(row));
      byUser.set(row.userId, events);
    }
    for (const [userId, events] of byUser) {
      for (const s of this.byUser.get(userId) ?? []) {
        if (!s.waiting) this.deliver(s, events);
        else if (s.waiting.push(...events) > this.opts.bufferEvents) this.end(s, 'behind');
      }
    }
  }

  private deliver(s: Subscriber, events: StreamedEvent[]) {
    const fresh = events.filter((e) => comparePositions(e.position, s.lastSent) > 0);
    if (s.ended || fresh.length === 0) return;
    s.lastSent = fresh.at(-1)!.position;
    s.sink.send(fresh);
  }

  private beat() {
    for (const subscribers of this.byUser.values()) for (const s of subscribers) s.sink.heartbeat();
  }

  private end(s: Subscriber, reason: StreamEndReason) {
    if (s.ended) return;
    this.leave(s);
    s.sink.end(reason);
  }

  private leave(s: Subscriber) {
    if (s.ended) return;
    s.ended = true;
    s.waiting = null;
    const mine = this.byUser.get(s.userId);
    mine?.delete(s);
    if (mine?.size === 0) this.byUser.delete(s.userId);
    this.count--;
    if (this.count === 0) {
      // Nobody follows: stop reading, and start from the newest event for the next subscriber
      // rather than from wherever this one left off.
      this.position = undefined;
      this.positionLoad = undefined;
      this.generation++;
    }
  }
}

const later = (a: EventPosition, b: EventPosition) => (comparePositions(a, b) >= 0 ? a : b);

function streamedEvent(row: FeedEventRow): StreamedEvent {
  const view = presentEvent(row);
  return { position: row.position, cursor: view.cursor, eventType: view.eventType, nodeId: view.nodeId, json: JSON.stringify(view) };
}
