// Webhook verification against signatures made here with node:crypto, the way the Standard
// Webhooks "v1a" scheme defines them (test/client/webhooks.test.ts checks it against the service's
// own signer and a real delivery).
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importWebhookPublicKey, verifyWebhook, WebhookVerificationError } from './verify-webhook.ts';

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const signature = (key: KeyObject, id: string, timestamp: string, body: string) =>
  `v1a,${sign(null, Buffer.from(`${id}.${timestamp}.${body}`), key).toString('base64')}`;

const BODY = '{"eventType":"TEST","eventTimestamp":"2026-01-01T00:00:00.000Z","nodeId":"ab","details":{"nodeId":"ab","message":"caf\u00e9"}}';
const NOW = new Date('2026-01-01T00:00:10Z');
const TIMESTAMP = String(NOW.getTime() / 1000 - 10);
const ID = 'evt_0123456789abcdef0123456789abcdef';

describe('verifyWebhook', () => {
  const current = keyPair();
  const previous = keyPair();

  const headersWith = (overrides: Record<string, string> = {}) => ({
    'webhook-id': ID,
    'webhook-timestamp': TIMESTAMP,
    'webhook-signature': signature(current.privateKey, ID, TIMESTAMP, BODY),
    ...overrides,
  });

  it('answers the event, its id and timestamp for a good signature, from headers of either kind and a body of either kind', async () => {
    const publicKey = await importWebhookPublicKey(current.pem);
    const expected = { webhookId: ID, timestamp: Number(TIMESTAMP), event: JSON.parse(BODY) };
    expect(await verifyWebhook({ publicKey, headers: headersWith(), body: BODY, now: NOW })).toEqual(expected);
    expect(await verifyWebhook({ publicKey, headers: new Headers(headersWith()), body: new TextEncoder().encode(BODY), now: NOW })).toEqual(expected);
    // Header names in another case, as some frameworks keep them.
    const capitalised = Object.fromEntries(Object.entries(headersWith()).map(([k, v]) => [k.replace(/(^|-)w/g, (m) => m.toUpperCase()), v]));
    expect(await verifyWebhook({ publicKey, headers: capitalised, body: BODY, now: NOW })).toEqual(expected);
  });

  it('accepts either key during a rotation, when the header carries both signatures', async () => {
    const both = `${signature(current.privateKey, ID, TIMESTAMP, BODY)} ${signature(previous.privateKey, ID, TIMESTAMP, BODY)}`;
    for (const pem of [current.pem, previous.pem]) {
      const publicKey = await importWebhookPublicKey(pem);
      await expect(verifyWebhook({ publicKey, headers: headersWith({ 'webhook-signature': both }), body: BODY, now: NOW })).resolves.toMatchObject({ webhookId: ID });
    }
    // A receiver that holds both keys accepts a header signed by only one of them.
    const keys = await Promise.all([previous.pem, current.pem].map(importWebhookPublicKey));
    await expect(verifyWebhook({ publicKey: keys, headers: headersWith(), body: BODY, now: NOW })).resolves.toMatchObject({ webhookId: ID });
  });

  it('refuses a changed body, id or timestamp, another key, an old timestamp, and missing or odd headers', async () => {
    const publicKey = await importWebhookPublicKey(current.pem);
    const otherKey = await importWebhookPublicKey(previous.pem);
    const refused = async (options: Partial<Parameters<typeof verifyWebhook>[0]>, reason: RegExp) => {
      const attempt = verifyWebhook({ publicKey, headers: headersWith(), body: BODY, now: NOW, ...options });
      await expect(attempt).rejects.toBeInstanceOf(WebhookVerificationError);
      await expect(attempt).rejects.toThrow(reason);
    };
    const noSignature = /no v1a signature/;
    await refused({ body: BODY.replace('TEST', 'NODE_LOCKED') }, noSignature);
    await refused({ headers: headersWith({ 'webhook-id': 'evt_other' }) }, noSignature);
    const later = String(Number(TIMESTAMP) + 1);
    await refused({ headers: headersWith({ 'webhook-timestamp': later }) }, noSignature);
    await refused({ publicKey: otherKey }, noSignature);
    await refused({ now: new Date(NOW.getTime() + 301_000) }, /more than 300 s/);
    await refused({ headers: headersWith({ 'webhook-timestamp': '1e9' }) }, /not unix seconds/);
    await refused({ headers: { 'webhook-id': ID, 'webhook-timestamp': TIMESTAMP } }, /webhook-signature is missing/);
    await refused({ headers: { ...headersWith(), 'webhook-id': [ID, ID] } }, /more than once/);
    // Other versions (v1: symmetric HMAC) and broken base64 are skipped, not taken for a match.
    await refused({ headers: headersWith({ 'webhook-signature': `v1,${signature(current.privateKey, ID, TIMESTAMP, BODY).slice(4)} v1a,%%%` }) }, noSignature);
  });
});
