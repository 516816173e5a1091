// An operator who turned the original service's scheme off (WEBHOOK_SIGNATURE_SCHEMES): webhooks
// carry Standard Webhooks alone, the key list names only its keys, and GET /api/webhook-public-key
// answers the Ed25519 key as it did before the RSA scheme existed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { startReceiver, verifyWithPython, type Receiver } from './receiver.ts';

describe(`webhooks with X-ThunderStack-Signature turned off, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_SIGNATURE_SCHEMES: 'standard-webhooks-v1a' });
    ({ alice } = await createTenants(t));
    await createNodes(t, alice, [{ name: 'v1a-only', settings: { webhookUrl: receiver.url } }]);
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('sends and lists Standard Webhooks alone', async () => {
    const [first] = await receiver.waitFor((all) => all.length > 0);
    expect(first!.thunderStackSignature).toBeUndefined();
    const keys = (await t.call('/api/webhook-public-keys', { token: alice.token })).json.data as any[];
    expect(keys.map((k) => [k.scheme, k.current])).toEqual([['standard-webhooks-v1a', true]]);
    const single = (await t.call('/api/webhook-public-key', { token: alice.token })).json.data;
    expect(single).toBe(keys[0].publicKey);
    expect(verifyWithPython([single], [first!])).toEqual([[true]]);
  });
});
