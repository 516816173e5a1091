// Webhook delivery through the real service: a real receiver on loopback (private targets allowed
// in this configuration), every signature checked by an independent Python verifier, retries after
// an outage with stable ids, Retry-After, 410, redelivery, test events and key rotation; and the
// original service's X-ThunderStack-Signature checked as a receiver written from its docs does.
import { constants, verify } from 'node:crypto';
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { startReceiver, verifyWithPython, type Receiver, type ReceivedWebhook } from './receiver.ts';

/**
 * The original service's documented check, written from its docs' description: a base64 RSA-SHA256
 * (PKCS#1 v1.5) signature in X-ThunderStack-Signature over the raw body, or over JSON.stringify of
 * the parsed body when a framework kept only that.
 */
function originalDocsVerify(pem: string, w: ReceivedWebhook) {
  const signature = Buffer.from(w.thunderStackSignature ?? '', 'base64');
  const check = (data: string) => verify('RSA-SHA256', Buffer.from(data), { key: pem, padding: constants.RSA_PKCS1_PADDING }, signature);
  return { raw: check(w.body), reserialised: check(JSON.stringify(JSON.parse(w.body))) };
}

// Short steps so a test sees several attempts; long enough in total (about 12 s) to outlast an outage.
const SCHEDULE = '0,100ms,200ms,300ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s';

describe(`webhook delivery on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let receiver: Receiver;
  let nodeId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: SCHEDULE, WEBHOOK_TIMEOUT: '5s' });
    ({ alice, bob } = await createTenants(t));
    [nodeId] = await createNodes(t, alice, [{ name: 'hooked', settings: { webhookUrl: receiver.url } }]);
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  const publishedKeys = async (scheme: string) => {
    const r = await t.call('/api/webhook-public-keys', { token: alice.token });
    expect(r.status).toBe(200);
    return (r.json.data as any[]).filter((k) => k.scheme === scheme);
  };
  /** The current Standard Webhooks (Ed25519) key. */
  const publicKey = async () => (await publishedKeys('standard-webhooks-v1a')).find((k) => k.current)!.publicKey as string;
  /** What the original's receivers fetch: `data` of GET /api/webhook-public-key. */
  const thunderStackKey = async () => {
    const r = await t.call('/api/webhook-public-key', { token: alice.token });
    expect(r.status).toBe(200);
    return r.json.data as string;
  };
  const testEvent = async (id = nodeId) => {
    const r = await t.call(`/api/nodes/${id}/webhooks/test`, { method: 'POST', token: alice.token });
    expect(r.status).toBe(200);
    return r.json.data.eventId as string;
  };
  const deliveries = async (id = nodeId) => {
    const r = await t.call(`/api/nodes/${id}/webhooks/deliveries?limit=200`, { token: alice.token });
    expect(r.status).toBe(200);
    return r.json.data as any[];
  };
  /** The delivery matching `pick` once it has finished (the receiver answers before the outcome is written). */
  const finished = async (pick: (d: any) => boolean, id = nodeId) => {
    for (let i = 0; i < 200; i++) {
      const d = (await deliveries(id)).find(pick);
      if (d && d.state !== 'pending' && d.state !== 'delivering') return d;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the delivery did not finish');
  };
  const answered = (id: string) => (all: ReceivedWebhook[]) => all.some((w) => w.id === id && w.answeredOk);

  it('delivers the lifecycle events of a node in order, each signed verifiably', async () => {
    const all = await receiver.waitFor((all) => all.some((w) => w.json.details?.status === 'RUNNING'));
    const statuses = all.filter((w) => w.json.eventType === 'NODE_STATUS_UPDATED').map((w) => w.json.details.status);
    expect(statuses).toEqual(['STARTING', 'RUNNING']);
    const running = all.find((w) => w.json.details?.status === 'RUNNING')!;
    expect(Object.keys(running.json)).toEqual(['eventType', 'eventTimestamp', 'nodeId', 'details']);
    expect(running.json).toMatchObject({ eventType: 'NODE_STATUS_UPDATED', nodeId, details: { nodeId, status: 'RUNNING' } });
    expect(Date.parse(running.json.eventTimestamp)).not.toBeNaN();
    expect(running.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(Math.abs(Number(running.timestamp) - Date.now() / 1000)).toBeLessThan(300);
    expect(running.signature).toMatch(/^v1a,[A-Za-z0-9+/]+=*$/);

    const verdicts = verifyWithPython([await publicKey()], all);
    expect(verdicts).toEqual(all.map(() => [true]));
    // The verifier can say no: a changed body, id or timestamp does not verify.
    const forged = [
      { ...running, body: running.body.replace('RUNNING', 'PAUSED') },
      { ...running, id: 'evt_other' },
      { ...running, timestamp: String(Number(running.timestamp) + 1) },
    ];
    expect(verifyWithPython([await publicKey()], forged)).toEqual([[false], [false], [false]]);
  });

  it("signs every delivery as the original service did: its docs' receiver accepts them, over the raw body or the parsed one", async () => {
    const all = await receiver.waitFor((all) => all.some((w) => w.json.details?.status === 'RUNNING'));
    const pem = await thunderStackKey();
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    for (const w of all) {
      expect(w.thunderStackSignature).toMatch(/^[A-Za-z0-9+/]{342}==$/); // one 2048-bit signature
      expect(JSON.stringify(JSON.parse(w.body))).toBe(w.body);
      expect(originalDocsVerify(pem, w)).toEqual({ raw: true, reserialised: true });
    }
    // It can say no: another body, or the Ed25519 key, does not verify.
    const running = all.find((w) => w.json.details?.status === 'RUNNING')!;
    expect(originalDocsVerify(pem, { ...running, body: running.body.replace('RUNNING', 'PAUSED') })).toEqual({ raw: false, reserialised: false });
    const ed25519 = await publicKey();
    const withEd25519 = (() => {
      try {
        return originalDocsVerify(ed25519, running).raw;
      } catch {
        return false;
      }
    })();
    expect(withEd25519).toBe(false);

    // The list names the same key, current, beside the Standard Webhooks key.
    const r = await t.call('/api/webhook-public-keys', { token: alice.token });
    expect(r.status).toBe(200);
    const keys = r.json.data as any[];
    expect(keys.map((k) => [k.scheme, k.header, k.current])).toEqual([
      ['thunderstack-rsa-sha256', 'X-ThunderStack-Signature', true],
      ['standard-webhooks-v1a', 'webhook-signature', true],
    ]);
    expect(keys[0]).toMatchObject({ publicKey: pem, keyId: expect.stringMatching(/^whk_[0-9a-f]{16}$/), createdAt: expect.any(String), signsUntil: null, retiresAt: null });
    expect(keys[1].publicKey).toBe(await publicKey());
    expect((await t.call('/api/webhook-public-keys')).status).toBe(401);
    expect((await t.call('/api/webhook-public-keys', { token: 'rln_not-a-token' })).status).toBe(401);
  });

  it('sends a test event and lists deliveries with their attempts', async () => {
    const eventId = await testEvent();
    const [w] = (await receiver.waitFor(answered(eventId))).filter((w) => w.id === eventId);
    expect(w!.json).toEqual({ eventType: 'TEST', eventTimestamp: expect.any(String), nodeId, details: { nodeId, message: expect.any(String) } });
    const d = await finished((d) => d.eventId === eventId);
    const list = await deliveries();
    expect(d).toMatchObject({
      deliveryId: expect.stringMatching(/^dlv_[0-9a-f]{32}$/),
      eventType: 'TEST',
      event: w!.json,
      url: receiver.url,
      state: 'succeeded',
      nextAttemptAt: null,
      redeliveryOf: null,
      attempts: [{ attempt: 1, url: receiver.url, statusCode: 204, remoteAddress: '127.0.0.1', error: null, durationMs: expect.any(Number) }],
    });
    expect(list[0].eventId).toBe(eventId); // newest first
  });

  it('keeps every event through a receiver outage: retried with the same id, delivered in order', async () => {
    const port = receiver.port;
    await receiver.close();
    const ids = [await testEvent(), await testEvent(), await testEvent()];
    // Wait until the first has failed at least twice against the closed port.
    for (;;) {
      const d = (await deliveries()).find((d) => d.eventId === ids[0]);
      if (d && d.attempts.length >= 2) {
        expect(d.state).toBe('pending');
        expect(d.attempts[0].error).toMatch(/ECONNREFUSED/);
        expect(d.attempts[0].statusCode).toBeNull();
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = receiver.received;
    receiver = await startReceiver(port);
    receiver.received.push(...before);
    await receiver.waitFor((all) => ids.every((id) => answered(id)(all)));
    const fresh = receiver.received.slice(before.length);
    // In order, each once (the receiver was down, so nothing else arrived twice).
    expect(fresh.map((w) => w.id)).toEqual(ids);
    expect(verifyWithPython([await publicKey()], fresh)).toEqual(ids.map(() => [true]));
    const d = await finished((d) => d.eventId === ids[0]);
    expect(d.attempts.length).toBeGreaterThanOrEqual(3);
    expect(d.attempts.at(-1)).toMatchObject({ statusCode: 204, error: null });
  });

  it('honours Retry-After on 429 and 503', async () => {
    let calls = 0;
    // One second: the longest step of this schedule, which also caps what a receiver may ask for.
    receiver.answer = () => {
      calls++;
      return calls <= 2 ? { status: calls === 1 ? 429 : 503, headers: { 'retry-after': '1' } } : { status: 204 };
    };
    const eventId = await testEvent();
    await receiver.waitFor(answered(eventId));
    receiver.answer = () => ({ status: 204 });
    const d = await finished((d) => d.eventId === eventId);
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual([429, 503, 204]);
    // Without Retry-After the next attempts would follow after about 100 and 200 ms (the schedule, with jitter).
    const gap = (i: number) => Date.parse(d.attempts[i + 1].startedAt) - Date.parse(d.attempts[i].startedAt);
    expect(gap(0)).toBeGreaterThanOrEqual(950);
    expect(gap(1)).toBeGreaterThanOrEqual(950);
  });

  it('redelivers a finished delivery with the same webhook-id', async () => {
    const eventId = await testEvent();
    await receiver.waitFor(answered(eventId));
    const original = await finished((d) => d.eventId === eventId);
    const r = await t.call(`/api/nodes/${nodeId}/webhooks/deliveries/${original.deliveryId}/redeliver`, { method: 'POST', token: alice.token });
    expect(r.status).toBe(200);
    const again = r.json.data.deliveryId;
    expect(again).not.toBe(original.deliveryId);
    await receiver.waitFor((all) => all.filter((w) => w.id === eventId && w.answeredOk).length === 2);
    const copies = receiver.received.filter((w) => w.id === eventId);
    expect(copies[1]!.body).toBe(copies[0]!.body);
    const redelivery = await finished((d) => d.deliveryId === again);
    expect(redelivery).toMatchObject({ eventId, redeliveryOf: original.deliveryId, state: 'succeeded' });

    const missing = await t.call(`/api/nodes/${nodeId}/webhooks/deliveries/dlv_${'0'.repeat(32)}/redeliver`, { method: 'POST', token: alice.token });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('delivery_not_found');
    const foreign = await t.call(`/api/nodes/${nodeId}/webhooks/deliveries/${original.deliveryId}/redeliver`, { method: 'POST', token: bob.token });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('node_not_found');
  });

  it('signs with both keys during a rotation overlap, and the public key is the new one', async () => {
    const oldKey = await publicKey();
    const file = t.config.webhooks.signingKeyFile;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const rotated = await t.server.services.webhookKeys.rotate(60 * 60_000);
    const newKey = await publicKey();
    expect(newKey).not.toBe(oldKey);
    expect(rotated.publicKey).toBe(newKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const eventId = await testEvent();
    const [w] = (await receiver.waitFor(answered(eventId))).filter((w) => w.id === eventId);
    expect(w!.signature.split(' ')).toHaveLength(2);
    expect(verifyWithPython([newKey, oldKey], [w!])).toEqual([[true, true]]);

    // With no overlap the key just replaced stops signing at once; the first one is still in its hour.
    await t.server.services.webhookKeys.rotate(0);
    const newest = await publicKey();
    const later = await testEvent();
    const [x] = (await receiver.waitFor(answered(later))).filter((w) => w.id === later);
    expect(x!.signature.split(' ')).toHaveLength(2);
    expect(verifyWithPython([newest, newKey, oldKey], [x!])).toEqual([[true, false, true]]);
  });

  it("a receiver following the advice of docs/WEBHOOKS.md verifies every webhook across a rotation, in either scheme", async () => {
    const rsaKeys = async () => (await publishedKeys('thunderstack-rsa-sha256')).map((k) => k.publicKey as string);
    const v1aKeys = async () => (await publishedKeys('standard-webhooks-v1a')).map((k) => k.publicKey as string);
    const v1aVerifies = (pem: string, w: ReceivedWebhook) =>
      w.signature.split(' ').some((part) => {
        const [version, sig] = part.split(',');
        return version === 'v1a' && verify(null, Buffer.from(`${w.id}.${w.timestamp}.${w.body}`), pem, Buffer.from(sig!, 'base64'));
      });
    // The three receivers of docs/WEBHOOKS.md: accept any listed key of the scheme, or keep the one key of
    // GET /api/webhook-public-key; either way, when nothing verifies, fetch again once and retry.
    let listed = { rsa: await rsaKeys(), v1a: await v1aKeys() };
    let single = await thunderStackKey();
    const verdicts: Array<{ id: string; list: boolean; single: boolean; v1a: boolean; signer: string | undefined }> = [];
    receiver.answer = async (w) => {
      const rsaOk = (pems: string[]) => pems.some((pem) => originalDocsVerify(pem, w).raw);
      let list = rsaOk(listed.rsa);
      if (!list) list = rsaOk((listed = { ...listed, rsa: await rsaKeys() }).rsa);
      let one = rsaOk([single]);
      if (!one) one = rsaOk([(single = await thunderStackKey())]);
      let v1a = listed.v1a.some((pem) => v1aVerifies(pem, w));
      if (!v1a) v1a = (listed = { ...listed, v1a: await v1aKeys() }).v1a.some((pem) => v1aVerifies(pem, w));
      verdicts.push({ id: w.id, list, single: one, v1a, signer: listed.rsa.find((pem) => originalDocsVerify(pem, w).raw) });
      return { status: list && one && v1a ? 204 : 401 };
    };
    try {
      const oldRsa = await thunderStackKey();
      const ids = [await testEvent(), await testEvent()];
      const rotated = t.server.services.webhookKeys.rotate(1500);
      const newRsa = rotated.thunderStack!.publicKey;
      // Published at once, not yet signing.
      const during = await publishedKeys('thunderstack-rsa-sha256');
      expect(during.filter((k) => k.current).map((k) => k.publicKey)).toEqual([oldRsa]);
      expect(during.find((k) => k.publicKey === newRsa)).toMatchObject({ current: false, signsFrom: rotated.thunderStack!.signsFrom });
      for (const end = Date.now() + 3500; Date.now() < end; await new Promise((r) => setTimeout(r, 150))) ids.push(await testEvent());
      await receiver.waitFor((all) => ids.every((id) => all.some((w) => w.id === id)));
      const seen = verdicts.filter((v) => ids.includes(v.id));
      expect(seen.filter((v) => !(v.list && v.single && v.v1a))).toEqual([]);
      // It did cross the switch: the old key signed the first events, the new one the last.
      expect(seen[0]!.signer).toBe(oldRsa);
      expect(seen.at(-1)!.signer).toBe(newRsa);
      expect(await thunderStackKey()).toBe(newRsa);
      const after = await publishedKeys('thunderstack-rsa-sha256');
      expect(after.filter((k) => k.current).map((k) => k.publicKey)).toEqual([newRsa]);
      // Listed for as long again as the overlap after it stopped signing (3 s after the rotation), then retired.
      expect(after.map((k) => k.publicKey)).not.toContain(oldRsa);
    } finally {
      receiver.answer = () => ({ status: 204 });
    }
  });

  it('stops after a 410: the URL is removed and nothing more is sent', async () => {
    const r = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'gone', network: 'regtest', settings: { webhookUrl: `${receiver.url}?gone` } } });
    const goneNode = r.json.data.nodeId;
    receiver.answer = (w) => (w.path.endsWith('?gone') ? { status: 410 } : { status: 204 });
    await receiver.waitFor((all) => all.some((w) => w.path.endsWith('?gone')));
    await t.waitForStatus(alice, goneNode, 'RUNNING');
    let node: any;
    for (let i = 0; i < 100; i++) {
      node = (await t.call(`/api/nodes/${goneNode}`, { token: alice.token })).json.data;
      if (node.settings.webhookUrl === undefined) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(node.settings).toEqual({});
    // Later events of that node are not sent: a test event is refused, and status changes go nowhere.
    const test = await t.call(`/api/nodes/${goneNode}/webhooks/test`, { method: 'POST', token: alice.token });
    expect(test.status).toBe(409);
    expect(test.json.error.code).toBe('webhook_not_configured');
    const list = await deliveries(goneNode);
    expect(list.filter((d) => d.attempts.length > 0)).toHaveLength(1);
    expect(list.find((d) => d.attempts.length > 0)).toMatchObject({ state: 'failed', attempts: [{ statusCode: 410 }] });
    expect(list.every((d) => d.state === 'failed' || d.state === 'cancelled')).toBe(true);
    expect(receiver.received.filter((w) => w.path.endsWith('?gone'))).toHaveLength(1);
  });

  it("answers 404 for another user's node on every webhook route", async () => {
    for (const [path, method] of [
      [`/api/nodes/${nodeId}/webhooks/deliveries`, 'GET'],
      [`/api/nodes/${nodeId}/webhooks/test`, 'POST'],
    ] as const) {
      const r = await t.call(path, { method, token: bob.token });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('node_not_found');
    }
    const bad = await t.call(`/api/nodes/${nodeId}/webhooks/deliveries?limit=0`, { token: alice.token });
    expect(bad.status).toBe(400);
  });

  it('documents the routes, the event envelope and the signed request in the OpenAPI document', async () => {
    const doc = (await t.call('/api/openapi.json')).json;
    for (const path of ['/api/webhook-public-key', '/api/webhook-public-keys', '/api/nodes/{id}/settings', '/api/nodes/{id}/webhooks/deliveries', '/api/nodes/{id}/webhooks/test', '/api/nodes/{id}/webhooks/deliveries/{deliveryId}/redeliver']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.components.schemas.WebhookEvent.properties.eventType.anyOf.map((s: any) => s.const ?? s.enum?.[0])).toEqual(
      expect.arrayContaining(['NODE_STATUS_UPDATED', 'NODE_LOCKED', 'NODE_UNLOCKED', 'NODE_UPGRADE_AVAILABLE', 'NODE_UPGRADE_COMPLETED', 'NODE_UPGRADE_FAILED', 'LOG_EXPORT_READY']),
    );
    const hook = doc.webhooks.nodeEvent.post;
    expect(hook.parameters.map((p: any) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-ThunderStack-Signature']);
    expect(hook.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/WebhookEvent');
  });
});
