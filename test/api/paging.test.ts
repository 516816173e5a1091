// Paged lists through real HTTP: API tokens, a node's client certificates and its webhook
// deliveries (nodes and backups have their own suites). Every page joined is the whole list in
// order; a cursor of another list, of another user or node, or a made-up one is 400; a page size
// out of 1-200 is 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type CallResult, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

describe(`paged lists of tokens, certificates and deliveries, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeA: string;
  let nodeB: string;
  let receiver: Receiver;

  /** Follows nextCursor from the first page to the last; answers every item's id and the pages' sizes. */
  const walk = async (path: string, key: string, id: (item: any) => string, user = alice) => {
    const ids: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const r: CallResult = await t.call(`${path}${sep}limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: user.token });
      expect(r.status, r.text).toBe(200);
      ids.push(...r.json[key].map(id));
      sizes.push(r.json[key].length);
      cursor = r.json.nextCursor;
    } while (cursor);
    return { ids, sizes };
  };
  const firstCursor = async (path: string, user = alice) => (await t.call(`${path}?limit=1`, { token: user.token })).json.nextCursor as string;
  const expectBadCursor = async (path: string, cursor: string, user = alice) => {
    const r = await t.call(`${path}?cursor=${cursor}`, { token: user.token });
    expect(r.status, `${path} ${r.text}`).toBe(400);
    expect(r.json.error.code).toBe('invalid_request');
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOW_HTTP: 'true' });
    ({ alice, bob } = await createTenants(t));
    [nodeA, nodeB] = await createNodes(t, alice, [{ name: 'paged-a', settings: { webhookUrl: receiver.url } }, { name: 'paged-b' }]);
    for (let i = 0; i < 4; i++) await t.server.services.accounts.createToken(alice.email, `extra-${i}`);
    for (const node of [nodeA, nodeA, nodeA, nodeB]) {
      expect((await t.call(`/api/nodes/${node}/generate-cert`, { method: 'POST', token: alice.token })).status).toBe(200);
    }
    for (let i = 0; i < 3; i++) {
      expect((await t.call(`/api/nodes/${nodeA}/webhooks/test`, { method: 'POST', token: alice.token })).status).toBeLessThan(300);
    }
    await receiver.waitFor((all) => all.filter((w) => w.json?.eventType === 'TEST').length >= 3);
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('pages tokens, oldest first, and the pages make the whole list', async () => {
    const all = await t.call('/api/tokens', { token: alice.token });
    expect(all.json.nextCursor).toBeNull();
    expect(all.json.tokens).toHaveLength(5);
    const { ids, sizes } = await walk('/api/tokens', 'tokens', (x) => x.id);
    expect(ids).toEqual(all.json.tokens.map((x: any) => x.id));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it("pages a node's certificates, oldest first", async () => {
    const all = await t.call(`/api/nodes/${nodeA}/certs`, { token: alice.token });
    expect(all.json.certificates).toHaveLength(3);
    const { ids } = await walk(`/api/nodes/${nodeA}/certs`, 'certificates', (x) => x.serial);
    expect(ids).toEqual(all.json.certificates.map((x: any) => x.serial));
  });

  it("pages a node's deliveries, newest first", async () => {
    const all = await t.call(`/api/nodes/${nodeA}/webhooks/deliveries`, { token: alice.token });
    expect(all.json.nextCursor).toBeNull();
    const { ids } = await walk(`/api/nodes/${nodeA}/webhooks/deliveries`, 'data', (x) => x.deliveryId);
    expect(ids).toEqual(all.json.data.map((x: any) => x.deliveryId));
    expect(ids.length).toBeGreaterThanOrEqual(3);
  });

  it("refuses a cursor of another user, another node, another list, or a made-up one", async () => {
    // Bob's token cursor in Alice's list.
    for (let i = 0; i < 2; i++) await t.server.services.accounts.createToken(bob.email, `bob-${i}`);
    await expectBadCursor('/api/tokens', await firstCursor('/api/tokens', bob));
    // A certificate cursor of node A on node B, and a token cursor on certificates.
    const certCursor = await firstCursor(`/api/nodes/${nodeA}/certs`);
    await expectBadCursor(`/api/nodes/${nodeB}/certs`, certCursor);
    await expectBadCursor(`/api/nodes/${nodeA}/certs`, await firstCursor('/api/tokens'));
    // A delivery cursor of node A on node B.
    await expectBadCursor(`/api/nodes/${nodeB}/webhooks/deliveries`, await firstCursor(`/api/nodes/${nodeA}/webhooks/deliveries`));
    for (const forged of ['x', Buffer.from('token:zz').toString('base64url'), Buffer.from(`token:${'0'.repeat(32)}`).toString('base64url')]) {
      await expectBadCursor('/api/tokens', forged);
    }
    for (const limit of ['0', '201', 'ten', '-1']) {
      for (const path of ['/api/tokens', `/api/nodes/${nodeA}/certs`, `/api/nodes/${nodeA}/webhooks/deliveries`]) {
        const r = await t.call(`${path}?limit=${limit}`, { token: alice.token });
        expect(r.status, `${path} limit=${limit}`).toBe(400);
      }
    }
  });

  it("keeps other users' node lists out: 404 as before", async () => {
    for (const path of [`/api/nodes/${nodeA}/certs?limit=1`, `/api/nodes/${nodeA}/webhooks/deliveries?limit=1`]) {
      expect((await t.call(path, { token: bob.token })).status).toBe(404);
    }
  });
});
