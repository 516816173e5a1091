// DNS rebinding: a host name that resolved to a public address when the URL was saved and resolves
// to loopback when the delivery connects is refused at connect time; nothing reaches the receiver
// on loopback. The resolver is the one seam replaced; database, dispatcher and sockets are real.
import { describe, expect, it } from 'vitest';
import { insertOwnerUser, databaseLabel } from '../helpers/database.ts';
import { createLogger } from '../../src/logger.ts';
import { insertUser } from '../../src/db/users.ts';
import { insertNode } from '../../src/db/nodes.ts';
import { recordNodeEvent } from '../../src/db/node-events.ts';
import { listNodeDeliveries } from '../../src/db/webhook-deliveries.ts';
import { checkWebhookUrl } from '../../src/webhooks/target-url.ts';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.ts';
import { WebhookSender } from '../../src/webhooks/send-webhook.ts';
import { WebhookKeyring } from '../../src/webhooks/signing-keys.ts';
import { join } from 'node:path';
import { useDispatcherFixture } from './dispatcher-fixture.ts';

describe(`DNS rebinding at delivery time on ${databaseLabel()}`, () => {
  const fixture = useDispatcherFixture('rln-rebind-');

  /** Saves a node with a webhook on rebind.test, records an event, and runs one dispatcher until an attempt is recorded. */
  async function deliverThroughRebindingName(allowPrivateTargets: boolean) {
    const { db, receiver, dir } = fixture;
    const url = `http://rebind.test:${receiver.port}/hook`;
    // At save time the name answers a public address, so the URL is accepted.
    const saved = await checkWebhookUrl(url, { allowPrivateTargets: false, httpsOnly: false }, async () => ['93.184.215.14']);
    await db.query(`INSERT INTO image_versions (version) VALUES ('v1')`);
    const user = (await insertOwnerUser(db, 'u1', 'rebind@example.com', 'starter'))!;
    const node = await insertNode(db, {
      id: 'a'.repeat(32), userId: user.id, name: 'n', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v1',
      settings: { webhookUrl: saved }, restPort: 40001, peerPort: 40002,
    });
    await recordNodeEvent(db, node, 'TEST', {});
    // At delivery time the same name answers loopback, where the receiver listens.
    const sender = new WebhookSender({ timeoutMs: 2000, allowPrivateTargets, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const keyring = new WebhookKeyring(join(dir, 'keys.json'), 0);
    keyring.ensure();
    const dispatcher = new WebhookDispatcher({
      db, sender, keyring, retryScheduleMs: [0], timeoutMs: 2000, concurrency: 2, pollIntervalMs: 50, log: createLogger('silent'),
    });
    dispatcher.start();
    try {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const [entry] = await listNodeDeliveries(db, node.id, 10);
        if (entry && entry.attempts.length > 0 && entry.delivery.state !== 'delivering') return entry;
        if (Date.now() > deadline) throw new Error('no attempt was recorded');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await dispatcher.stop();
    }
  }

  it('refuses the loopback address the name resolves to when connecting', async () => {
    const entry = await deliverThroughRebindingName(false);
    expect(entry.delivery.state).toBe('failed');
    expect(entry.attempts).toHaveLength(1);
    expect(entry.attempts[0]).toMatchObject({ status_code: null, remote_address: null });
    expect(entry.attempts[0]!.error).toMatch(/refused: rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(fixture.receiver.received).toHaveLength(0);
  });

  it('(control) delivers through the same resolver when private targets are allowed', async () => {
    const entry = await deliverThroughRebindingName(true);
    expect(entry.delivery.state).toBe('succeeded');
    expect(fixture.receiver.received).toHaveLength(1);
  });
});
