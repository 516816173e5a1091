// Node settings and the webhook URL policy as production runs it (private targets refused): every
// bad URL is a 400 naming the reason and stores nothing, at creation and through the settings route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';

// A public address (IP literal: these machines have no DNS) on the discard port: if anything is
// ever sent there it goes nowhere quickly.
const PUBLIC_URL = 'https://93.184.215.14:9/hook';

const BAD: Array<[string, unknown, RegExp]> = [
  ['a non-URL string', 'not-a-url', /must be an absolute http\(s\) URL/],
  ['text with spaces', 'not a url', /must not contain whitespace/],
  ['a relative path', '/hook', /must be an absolute http\(s\) URL/],
  ['ftp:', 'ftp://example.com/hook', /must use http or https, not ftp:/],
  ['file:', 'file:///etc/passwd', /must use http or https, not file:/],
  ['javascript:', 'javascript:alert(1)', /must use http or https, not javascript:/],
  ['credentials', 'https://user:secret@93.184.215.14/hook', /must not contain credentials/],
  ['loopback', 'http://127.0.0.1/hook', /127\.0\.0\.1, a loopback address/],
  ['loopback in another notation', 'http://0x7f.1/hook', /127\.0\.0\.1, a loopback address/],
  ['cloud metadata', 'http://169.254.169.254/latest/meta-data', /169\.254\.169\.254, a link-local address/],
  ['IPv6 loopback', 'http://[::1]/hook', /::1, a loopback address/],
  ['IPv4-mapped private', 'http://[::ffff:10.0.0.1]/hook', /a private address/],
  ['private', 'http://192.168.1.10/hook', /a private address/],
  ['unspecified', 'http://0.0.0.0/hook', /an unspecified address|a unspecified address/],
  ['multicast', 'http://224.0.0.1/hook', /a multicast address/],
  ['a host name resolving to loopback', 'http://localhost:8080/hook', /host localhost resolves to (127\.0\.0\.1|::1), a loopback address/],
  ['an over-long URL', `https://93.184.215.14/${'a'.repeat(2100)}`, /must be at most 2048 characters/],
  ['a number', 42, /webhookUrl must be a string,null/],
];

describe(`node settings and the webhook URL policy on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_TIMEOUT: '1s' });
    ({ alice, bob } = await createTenants(t));
    [nodeId] = await createNodes(t, alice, [{ name: 'configured', settings: { webhookUrl: PUBLIC_URL } }], { untilRunning: false });
  });
  afterAll(() => t?.stop());

  const settingsOf = async (id = nodeId) => (await t.call(`/api/nodes/${id}`, { token: alice.token })).json.data.settings;
  const nodeCount = async () => (await t.call('/api/nodes', { token: alice.token })).json.nodes.length;
  const setSettings = (settings: unknown, token = alice.token, id = nodeId) =>
    t.call(`/api/nodes/${id}/settings`, { method: 'POST', token, body: { settings } });

  it('stores a public URL given at creation', async () => {
    expect(await settingsOf()).toEqual({ webhookUrl: PUBLIC_URL });
  });

  for (const [what, url, reason] of BAD) {
    it(`refuses ${what} with 400 and stores nothing`, async () => {
      const before = await nodeCount();
      const created = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'bad', network: 'regtest', settings: { webhookUrl: url } } });
      expect(created.status).toBe(400);
      expect(created.json.error.code).toBe('invalid_request');
      expect(created.json.error.message).toMatch(reason);
      expect(await nodeCount()).toBe(before);

      const updated = await setSettings({ webhookUrl: url });
      expect(updated.status).toBe(400);
      expect(updated.json.error.code).toBe('invalid_request');
      expect(updated.json.error.message).toMatch(reason);
      expect(await settingsOf()).toEqual({ webhookUrl: PUBLIC_URL });
    });
  }

  it('refuses unknown fields in settings and in the body', async () => {
    const r = await setSettings({ webhookUrl: PUBLIC_URL, secret: 'x' });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/settings has an unknown field "secret"/);
    const c = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'bad', network: 'regtest', settings: { hook: 'x' } } });
    expect(c.status).toBe(400);
    expect(c.json.error.message).toMatch(/unknown field "hook"/);
    const body = await t.call(`/api/nodes/${nodeId}/settings`, { method: 'POST', token: alice.token, body: { settings: {}, other: 1 } });
    expect(body.status).toBe(400);
    const missing = await t.call(`/api/nodes/${nodeId}/settings`, { method: 'POST', token: alice.token, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/settings is required/);
    expect(await settingsOf()).toEqual({ webhookUrl: PUBLIC_URL });
  });

  it('changes the URL, leaves it alone when not given, and removes it with "" or null', async () => {
    const other = 'https://93.184.215.14:9/other?x=1';
    let r = await setSettings({ webhookUrl: other });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ message: expect.any(String) });
    expect(await settingsOf()).toEqual({ webhookUrl: other });
    r = await setSettings({});
    expect(r.status).toBe(200);
    expect(await settingsOf()).toEqual({ webhookUrl: other });
    r = await setSettings({ webhookUrl: '' });
    expect(r.status).toBe(200);
    expect(await settingsOf()).toEqual({});
    await setSettings({ webhookUrl: other });
    r = await setSettings({ webhookUrl: null });
    expect(r.status).toBe(200);
    expect(await settingsOf()).toEqual({});
    // A test event needs a URL.
    const test = await t.call(`/api/nodes/${nodeId}/webhooks/test`, { method: 'POST', token: alice.token });
    expect(test.status).toBe(409);
    expect(test.json.error.code).toBe('webhook_not_configured');
    await setSettings({ webhookUrl: PUBLIC_URL });
  });

  it('refuses a private URL to a caller of the node service that skips the API (the check is inside the service)', async () => {
    const { nodes } = t.server.services;
    const before = await nodeCount();
    await expect(nodes.createNode(alice.id, { name: 'direct', network: 'regtest', settings: { webhookUrl: 'http://169.254.169.254/' } })).rejects.toThrow(
      /a link-local address/,
    );
    expect(await nodeCount()).toBe(before);
    await expect(nodes.updateSettings(alice.id, nodeId, { webhookUrl: 'http://127.0.0.1/hook' })).rejects.toThrow(/a loopback address/);
    expect(await settingsOf()).toEqual({ webhookUrl: PUBLIC_URL });
  });

  it("answers 404 for another user's node and a missing one, changing nothing", async () => {
    for (const id of [nodeId, 'f'.repeat(32)]) {
      const r = await setSettings({ webhookUrl: '' }, bob.token, id);
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('node_not_found');
    }
    expect(await settingsOf()).toEqual({ webhookUrl: PUBLIC_URL });
  });
});
