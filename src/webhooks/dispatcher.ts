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
  settleDeliveries,
  type ClaimedDelivery,
  type SettleItem,
  type Settlement,
} from '../db/webhook-deliveries.ts';
import { settleDelivery } from './receiver-gone.ts';
import type { Logger } from '../logger.ts';
import { BackgroundLoop } from '../jobs/background-loop.ts';
import { serializeEnvelope } from './envelope.ts';
import { nextStep, type NextStep } from './retry-policy.ts';
import type { WebhookSender } from './send-webhook.ts';
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

const FAN_OUT_BATCH = 500;
// Outcomes written by one statement at most (its array parameters stay small).
const SETTLE_BATCH = 256;

export class WebhookDispatcher {
  // Two loops, each with its own poll: fan-out turns new events into deliveries (woken when this
  // process wrote events; its poll finds other replicas' events), and claiming sends due
  // deliveries (woken when fan-out added some, a slot freed up or a node's next delivery may go).
  // Fan-out runs beside claiming because a large batch of events takes a while to turn into
  // deliveries, and the slots should not sit idle meanwhile.
  private readonly fanOutLoop: BackgroundLoop;
  private readonly claimLoop: BackgroundLoop;
  private readonly inFlight = new Set<Promise<void>>();
  // Outcomes waiting to be written. They are written together, one statement per batch: those that
  // finish while a batch is being written go in the next one (no timer: under light load an
  // outcome is written at once; under heavy load the batches grow and the round trips per delivery
  // shrink). A delivery keeps its slot until its outcome is written, and its node's next delivery
  // cannot be claimed before that either, since it is claimed only once this one is finished.
  private settleQueue: Array<{ item: SettleItem; done: (err?: unknown) => void }> = [];
  private settling = false;
  // Longer than any attempt can take (the timeout bounds it, plus the write of its outcome), so a
  // live worker never loses its lease; short enough that a crashed replica's delivery resumes soon.
  private readonly leaseMs: number;

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.leaseMs = opts.timeoutMs * 2 + 5_000;
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

  /** Stops claiming and waits for the attempts under way (each is bounded by the timeout). */
  async stop() {
    await Promise.all([this.claimLoop.stop(), this.fanOutLoop.stop()]);
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

  /**
   * Claims as many due deliveries as there are free slots and starts sending them. When every slot
   * is taken, the next run comes when one frees up (each finished delivery wakes the loop).
   */
  private async claimDue() {
    const free = this.opts.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const claimed = await claimDeliveries(this.opts.db, free, this.leaseMs, randomUUID());
    for (const d of claimed) this.track(this.deliver(d));
  }

  private track(p: Promise<void>) {
    const tracked = p.finally(() => {
      this.inFlight.delete(tracked);
      // The node's next delivery may now go, and a slot is free.
      this.claimLoop.wake();
    });
    this.inFlight.add(tracked);
  }

  private async deliver(d: ClaimedDelivery) {
    const log = () => this.opts.log.child({ delivery: d.deliveryId, node: d.nodeId, attempt: d.attempts });
    try {
      if (!d.targetUrl) {
        await cancelDelivery(this.opts.db, d, 'the node no longer has a webhook URL');
        return;
      }
      const body = serializeEnvelope(d.payload);
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'webhook-id': d.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': this.opts.keyring.signatureHeader(d.eventId, timestamp, body),
      };
      const startedAt = new Date();
      const result = await this.opts.sender.send(d.targetUrl, headers, body);
      const step = nextStep(result, d.attempts, this.opts.retryScheduleMs);
      const error = result.error ?? (result.statusCode !== undefined ? `HTTP ${result.statusCode}` : 'no answer');
      const settlement: Settlement =
        step.kind === 'succeeded'
          ? { state: 'succeeded' }
          : step.kind === 'retry'
            ? { state: 'pending', retryInMs: step.delayMs, error }
            : step.kind === 'gone'
              ? { state: 'gone', error: 'HTTP 410 Gone: deliveries to this URL stopped and the webhook URL was removed' }
              : { state: 'failed', error: step.reason };
      const attempt = { url: d.targetUrl, startedAt, ...result };
      if (settlement.state === 'gone') await settleDelivery(this.opts.db, d, attempt, settlement);
      else await this.settle({ delivery: d, attempt, outcome: settlement });
      // Once recorded: an attempt whose outcome could not be written is made again and counted then.
      this.opts.metrics?.deliveryAttempted(step.kind, result.durationMs / 1000);
      if (step.kind !== 'succeeded') log().info({ outcome: step.kind, error }, 'webhook attempt failed');
    } catch (err) {
      // The lease runs out and the delivery is attempted again: nothing is lost.
      log().error({ err }, 'webhook delivery could not be recorded; it will be retried after its lease');
    }
  }

  /** Queues an outcome to be written with the others finishing now; resolves once it is written. */
  private settle(item: SettleItem): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settleQueue.push({ item, done: (err) => (err === undefined ? resolve() : reject(err)) });
      if (!this.settling) void this.writeSettlements();
    });
  }

  private async writeSettlements() {
    this.settling = true;
    // Outcomes finishing in the same turn of the event loop join the first batch.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.settleQueue.length > 0) {
        const batch = this.settleQueue.splice(0, SETTLE_BATCH);
        try {
          await settleDeliveries(this.opts.db, batch.map((b) => b.item));
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
