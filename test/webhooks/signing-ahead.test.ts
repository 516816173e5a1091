// The dispatcher signs a delivery while it waits for a slot. A signature that fails meanwhile must
// neither take the process down (an unhandled rejection would) nor lose the delivery: it is sent
// once its lease has run out, like any attempt that could not be recorded.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordNodeEvent } from '../../src/db/node-events.ts';
import { createLogger } from '../../src/logger.ts';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.ts';
import { WebhookSender } from '../../src/webhooks/send-webhook.ts';
import { WebhookKeyring } from '../../src/webhooks/signing-keys.ts';
import { databaseLabel } from '../helpers/database.ts';
import { useDispatcherFixture } from './dispatcher-fixture.ts';
import { insertNodesWithWebhook } from './webhook-nodes.ts';

/** Fails the first signature of one event, then signs as usual. */
class KeyringFailingOnce extends WebhookKeyring {
  failed = false;
  constructor(path: string, private readonly failEventId: () => string | undefined) {
    super(path, 0);
  }
  override async signatureHeader(webhookId: string, timestamp: number, body: string) {
    if (!this.failed && webhookId === this.failEventId()) {
      this.failed = true;
      throw new Error('signing failed (test)');
    }
    return super.signatureHeader(webhookId, timestamp, body);
  }
}

describe(`signing ahead of the slot, on ${databaseLabel()}`, () => {
  const fixture = useDispatcherFixture('rln-sign-ahead-');

  it('a signature failing while its delivery waits for the slot: the delivery is sent after its lease', async () => {
    const { db, receiver, dir } = fixture;
    const nodes = await insertNodesWithWebhook(db, ['a'.repeat(32), 'b'.repeat(32)], receiver.url, 24100);
    // One slot and one event per node: both are claimed together, the second waits in line.
    const events = [await recordNodeEvent(db, nodes[0]!, 'TEST', { n: 0 }), await recordNodeEvent(db, nodes[1]!, 'TEST', { n: 1 })];
    const keyring = new KeyringFailingOnce(join(dir, 'keys.json'), () => events[1]!.eventId);
    keyring.ensure();
    const timeoutMs = 1000; // the lease: 3 x the timeout + 5 s
    const dispatcher = new WebhookDispatcher({
      db, keyring, retryScheduleMs: [0], timeoutMs, concurrency: 1, pollIntervalMs: 50, log: createLogger('silent'),
      sender: new WebhookSender({ timeoutMs, allowPrivateTargets: true }),
    });
    dispatcher.start();
    try {
      const received = await receiver.waitFor((all) => all.length >= 2, 20_000);
      expect(keyring.failed).toBe(true);
      expect(received.map((w) => w.id)).toEqual(events.map((e) => e.eventId));
      // Its timestamp is the time of its signing, shortly before it was sent.
      const second = received[1]!;
      expect(Math.abs(Number(second.timestamp) - Date.now() / 1000)).toBeLessThan(3);
    } finally {
      await dispatcher.stop();
    }
    const [row] = await db.query<{ state: string; attempts: number }>(
      `SELECT state, attempts FROM webhook_deliveries WHERE node_id = $1`,
      [nodes[1]!.id],
    );
    expect(row).toEqual({ state: 'succeeded', attempts: 2 });
  }, 30_000);
});
