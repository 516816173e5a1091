// The delivery worker: feeds new node events into deliveries, claims due deliveries (the oldest
// unfinished one of each node, so a node's events arrive in order), signs and sends them, and
// records each attempt. Everything it needs to resume is in the database: a crash at any point
// leaves a delivery pending or leased, and it is sent (again) after the restart. Receivers must
// therefore expect the same webhook-id more than once (at-least-once, as Standard Webhooks says).
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.ts';
import {
  cancelDelivery,
  claimDeliveries,
  fanOutNodeEvents,
  releaseUnsentDeliveries,
  settleAndClaimSuccessors,
  type AttemptRecord,
  type ClaimedDelivery,
  type SettleItem,
  type Settlement,
} from '../db/webhook-deliveries.ts';
import { settleDelivery } from './receiver-gone.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import { serializeEnvelope } from './envelope.ts';
import { nextStep, type NextStep } from './retry-policy.ts';
import type { SendOutcome, WebhookSender } from './send-webhook.ts';
import type { WebhookKeyring } from './signing-keys.ts';

export interface WebhookDispatcherOptions {
  db: Database;
  sender: WebhookSender;
  keyring: WebhookKeyring;
  /** Delay before attempt 1, 2, ...; its length is the number of attempts. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** Deliveries in flight at once (to different nodes). */
  concurrency: number;
  pollIntervalMs: number;
  log: Logger;
  /** Told of every attempt (metrics/); absent: nobody counts. */
  metrics?: DeliveryMetrics;
}

/** What the dispatcher reports; implemented by metrics/service-metrics.ts. */
export interface DeliveryMetrics {
  /**
   * One attempt: `succeeded` (2xx), `retry` (failed, another attempt is scheduled), `failed`
   * (failed, the last attempt) or `gone` (410: the URL was removed); `seconds` from sending to the
   * whole answer, or to the failure.
   */
  deliveryAttempted(result: NextStep['kind'], seconds: number): void;
}

interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

const FAN_OUT_BATCH = 500;
// Deliveries claimed and not yet recorded, per slot: sending, ready, and having their outcome written.
const MAX_CLAIMED_PER_SLOT = 3;
// While deliveries are in hand, a claim waits until it can take at least concurrency / this.
const MIN_CLAIM_SHARE = 4;
// Outcomes written by one statement at most (its array parameters stay small).
const SETTLE_BATCH = 256;
// Successors claimed one after another for a node by the writes of outcomes, before its next
// delivery has to wait for a claim again: a claim takes the oldest due deliveries of all nodes, so a
// node with a long backlog cannot keep its turn while older deliveries of other nodes wait.
const MAX_SUCCESSION = 8;

export class WebhookDispatcher {
  // Two loops, each with its own poll: fan-out turns new events into deliveries (woken when this
  // process wrote events; its poll finds other replicas' events), and claiming keeps deliveries
  // ready to send (woken when fan-out added some, a POST finished or an outcome was written, since
  // the node's next delivery may then go). Fan-out runs beside claiming because a large batch of
  // events takes a while to turn into deliveries, and the slots should not sit idle meanwhile.
  private readonly fanOutLoop: BackgroundLoop;
  private readonly claimLoop: BackgroundLoop;
  // A delivery goes claimed -> ready -> sending -> recording -> done. `concurrency` bounds the POSTs
  // under way (the load on receivers); the database's round trips are kept off that path: up to as
  // many deliveries again are claimed ahead and wait in `ready`, so a freed slot starts its next
  // POST at once instead of after a claim, and a delivery gives its slot back as soon as its POST
  // has ended, while its outcome is written. Claimed deliveries not yet recorded stay bounded
  // (MAX_CLAIMED_PER_SLOT x concurrency): a slow database slows claiming, it does not pile up work.
  // A delivery is signed as it enters `ready` (on the thread pool, beside the POSTs under way), so
  // a slot is held for the POST alone; its webhook-timestamp is then as old as its wait there.
  private readonly ready: Array<{ delivery: ClaimedDelivery; request: Promise<SignedRequest> }> = [];
  private sending = 0;
  private claimedNotRecorded = 0;
  private readonly inFlight = new Set<Promise<void>>();
  // Outcomes waiting to be written. They are written together, one statement per batch: those that
  // finish while a batch is being written go in the next one (no timer: under light load an
  // outcome is written at once; under heavy load the batches grow and the round trips per delivery
  // shrink). A node's next delivery cannot be claimed before its predecessor's outcome is written:
  // the claim takes only the oldest unfinished delivery of each node.
  // The write of a delivery's outcome also claims its node's next delivery (when due), so a node's
  // queue moves on without a claim in between: `succession` counts how many times that happened in
  // a row for the delivery in hand (absent: it came from a claim).
  private settleQueue: Array<{ item: SettleItem; done: (err?: unknown) => void }> = [];
  private settling = false;
  private readonly succession = new Map<number, number>();
  // Longer than a delivery can be held: a wait in `ready` (at most one attempt's timeout, since
  // every slot frees up within it), the attempt (the timeout bounds it) and the write of its
  // outcome; so a live worker never loses its lease, and a crashed replica's deliveries resume soon.
  private readonly leaseMs: number;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.leaseMs = opts.timeoutMs * 3 + 5_000;
    const every = { intervalMs: opts.pollIntervalMs, log: opts.log };
    this.fanOutLoop = new BackgroundLoop({ ...every, name: 'webhook fan-out', run: () => this.fanOut() });
    this.claimLoop = new BackgroundLoop({ ...every, name: 'webhook claim', run: () => this.claimDue() });
  }

  start() {
    this.fanOutLoop.start();
    this.claimLoop.start();
  }

  /** Looks for new events now (called once this process has committed events). */
  wake() {
    this.fanOutLoop.wake();
  }

  /**
   * Stops claiming, gives back the deliveries claimed ahead (they were not attempted) and waits for
   * the attempts under way (each is bounded by the timeout) and the writes of their outcomes.
   */
  async stop() {
    await Promise.all([this.claimLoop.stop(), this.fanOutLoop.stop()]);
    const unsent = this.ready.splice(0).map((r) => r.delivery);
    for (const d of unsent) this.succession.delete(d.id);
    if (unsent.length > 0) {
      this.claimedNotRecorded -= unsent.length;
      // Left alone they would wait for their lease to run out (and count an attempt never made).
      await releaseUnsentDeliveries(this.opts.db, unsent).catch((err: unknown) =>
        this.opts.log.error({ err }, 'webhook deliveries claimed ahead could not be given back; they resume after their lease'),
      );
    }
    await Promise.allSettled([...this.inFlight]);
    this.opts.sender.close();
  }

  /** Turns new events into deliveries, batch after batch, until none are left. */
  private async fanOut() {
    for (;;) {
      const events = await fanOutNodeEvents(this.opts.db, FAN_OUT_BATCH);
      if (events > 0) this.claimLoop.wake();
      if (events < FAN_OUT_BATCH || this.fanOutLoop.stopping) break;
    }
  }

  /** Claims enough due deliveries to fill the free slots and the ready queue, and starts sending. */
  private async claimDue() {
    const slots = this.opts.concurrency;
    const wanted = Math.min(2 * slots - this.sending - this.ready.length, MAX_CLAIMED_PER_SLOT * slots - this.claimedNotRecorded);
    // A claim walks every node's queue whatever it takes, so while work is in hand it waits until
    // it can take a few (on PGlite, whose statements run one at a time, claims of one delivery
    // each were most of the database's time). The next POST ending or outcome written wakes it.
    const inHand = this.sending + this.ready.length > 0;
    if (wanted <= 0 || (inHand && wanted < Math.max(1, Math.floor(slots / MIN_CLAIM_SHARE)))) return;
    const claimed = await claimDeliveries(this.opts.db, wanted, this.leaseMs, randomUUID());
    this.claimedNotRecorded += claimed.length;
    this.makeReady(claimed);
    this.startSending();
  }

  /** Queues claimed deliveries to be sent, and signs each while it waits for a slot. */
  private makeReady(claimed: ClaimedDelivery[]) {
    for (const delivery of claimed) {
      const request = this.signedRequest(delivery);
      // Awaited when its slot comes; until then a failure must not count as unhandled.
      request.catch(() => {});
      this.ready.push({ delivery, request });
    }
  }

  /** The body and headers of one attempt, signed once per scheme (by every signing key of each). */
  private async signedRequest(d: ClaimedDelivery): Promise<SignedRequest> {
    const body = serializeEnvelope(d.payload);
    const timestamp = Math.floor(Date.now() / 1000);
    const signatures = await this.opts.keyring.signedHeaders(d.eventId, timestamp, body);
    return { body, headers: { 'webhook-id': d.eventId, 'webhook-timestamp': String(timestamp), ...signatures } };
  }

  /** Starts the ready deliveries that have a free slot. */
  private startSending() {
    while (this.sending < this.opts.concurrency && this.ready.length > 0 && !this.claimLoop.stopping) {
      const { delivery, request } = this.ready.shift()!;
      const tracked = this.deliver(delivery, request).finally(() => {
        this.inFlight.delete(tracked);
        this.succession.delete(delivery.id);
        this.claimedNotRecorded--;
        // The node's next delivery may now be claimed.
        this.claimLoop.wake();
      });
      this.inFlight.add(tracked);
    }
  }

  private async deliver(d: ClaimedDelivery, request: Promise<SignedRequest>) {
    const log = () => this.opts.log.child({ delivery: d.deliveryId, node: d.nodeId, attempt: d.attempts });
    try {
      if (!d.targetUrl) {
        await cancelDelivery(this.opts.db, d, 'the node no longer has a webhook URL');
        return;
      }
      const attempt = await this.send(d.targetUrl, request);
      const step = nextStep(attempt, d.attempts, this.opts.retryScheduleMs);
      const error = attempt.error ?? (attempt.statusCode !== undefined ? `HTTP ${attempt.statusCode}` : 'no answer');
      const settlement: Settlement =
        step.kind === 'succeeded'
          ? { state: 'succeeded' }
          : step.kind === 'retry'
            ? { state: 'pending', retryInMs: step.delayMs, error }
            : step.kind === 'gone'
              ? { state: 'gone', error: 'HTTP 410 Gone: deliveries to this URL stopped and the webhook URL was removed' }
              : { state: 'failed', error: step.reason };
      if (settlement.state === 'gone') await settleDelivery(this.opts.db, d, attempt, settlement);
      else await this.settle({ delivery: d, attempt, outcome: settlement });
      // Once recorded: an attempt whose outcome could not be written is made again and counted then.
      this.opts.metrics?.deliveryAttempted(step.kind, attempt.durationMs / 1000);
      if (step.kind !== 'succeeded') log().info({ outcome: step.kind, error }, 'webhook attempt failed');
    } catch (err) {
      // The lease runs out and the delivery is attempted again: nothing is lost.
      log().error({ err }, 'webhook delivery could not be recorded; it will be retried after its lease');
    }
  }

  /** POSTs the signed request in one of the slots; the slot is free again once the POST has ended. */
  private async send(url: string, request: Promise<SignedRequest>): Promise<AttemptRecord & SendOutcome> {
    this.sending++;
    try {
      const { body, headers } = await request;
      const startedAt = new Date();
      return { url, startedAt, ...(await this.opts.sender.send(url, headers, body)) };
    } finally {
      this.sending--;
      this.startSending();
      // The ready queue shrank: claim more while this outcome is being written.
      this.claimLoop.wake();
    }
  }

  /** Queues an outcome to be written with the others finishing now; resolves once it is written. */
  private settle(item: SettleItem): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settleQueue.push({ item, done: (err) => (err === undefined ? resolve() : reject(err)) });
      if (!this.settling) void this.writeSettlements();
    });
  }

  private withSuccession(item: SettleItem): SettleItem {
    const claimNext = !this.claimLoop.stopping && (this.succession.get(item.delivery.id) ?? 0) < MAX_SUCCESSION;
    return { ...item, claimNext };
  }

  /** Successors claimed by a write of outcomes go to the ready queue (or back, when stopping). */
  private async takeSuccessors(claimed: ClaimedDelivery[], settled: SettleItem[]) {
    if (claimed.length === 0) return;
    if (this.claimLoop.stopping) {
      // Stopping: given back like the ready queue, never sent from here.
      await releaseUnsentDeliveries(this.opts.db, claimed).catch((err: unknown) =>
        this.opts.log.error({ err }, 'webhook deliveries claimed ahead could not be given back; they resume after their lease'),
      );
      return;
    }
    const predecessor = new Map(settled.map((x) => [x.delivery.nodeId, x.delivery.id]));
    for (const d of claimed) this.succession.set(d.id, (this.succession.get(predecessor.get(d.nodeId)!) ?? 0) + 1);
    this.claimedNotRecorded += claimed.length;
    this.makeReady(claimed);
    this.startSending();
  }

  private async writeSettlements() {
    this.settling = true;
    // Outcomes finishing in the same turn of the event loop join the first batch.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.settleQueue.length > 0) {
        const batch = this.settleQueue.splice(0, SETTLE_BATCH);
        try {
          const items = batch.map((b) => this.withSuccession(b.item));
          const { claimed } = await settleAndClaimSuccessors(this.opts.db, items, { leaseMs: this.leaseMs, leaseToken: randomUUID() });
          await this.takeSuccessors(claimed, items);
          for (const b of batch) b.done();
        } catch (err) {
          for (const b of batch) b.done(err);
        }
      }
    } finally {
      this.settling = false;
    }
  }
}
