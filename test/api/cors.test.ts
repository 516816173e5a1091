// CORS on real sockets: a browser wallet on an allowed origin calls the management API and a node
// through the bearer gateway with its token; preflights are answered without a token and cached;
// another origin gets nothing to read; the web UI's session routes stay same-origin; production
// allows no origin unless told.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';

const WALLET = 'https://wallet.example';
const preflight = (method = 'GET') => ({ origin: WALLET, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' });

describe(`CORS with CORS_ALLOWED_ORIGINS on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  beforeAll(async () => {
    t = await startTestServer({ CORS_ALLOWED_ORIGINS: WALLET });
    alice = await t.createUser();
    nodeId = (await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'cors', network: 'regtest' } })).json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING');
  }, 60_000);
  afterAll(() => t?.stop());

  it('answers the management API preflight without a token, and marks answers for the allowed origin', async () => {
    const pre = await rawRequest(t.base, '/api/nodes', { method: 'OPTIONS', headers: preflight('POST') });
    expect(pre.status).toBe(204);
    expect(pre.headers).toMatchObject({
      'access-control-allow-origin': WALLET,
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    const list = await rawRequest(t.base, '/api/nodes', { headers: { origin: WALLET, authorization: `Bearer ${alice.token}` } });
    expect(list.status).toBe(200);
    expect(list.headers['access-control-allow-origin']).toBe(WALLET);
    expect(list.headers['access-control-expose-headers']).toContain('x-request-id');
    // An error answer is readable too (the page needs the reason), still only with a valid token.
    const refused = await rawRequest(t.base, '/api/nodes', { headers: { origin: WALLET } });
    expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([401, WALLET]);
  });

  it('gives another origin nothing to read, and keeps the session routes same-origin', async () => {
    const other = await rawRequest(t.base, '/api/nodes', { method: 'OPTIONS', headers: { ...preflight(), origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const list = await rawRequest(t.base, '/api/nodes', { headers: { origin: 'https://evil.example', authorization: `Bearer ${alice.token}` } });
    expect(list.headers['access-control-allow-origin']).toBeUndefined();
    const session = await rawRequest(t.base, '/api/session', { method: 'OPTIONS', headers: preflight('POST') });
    expect(session.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the bearer gateway preflight itself and marks the node answer', async () => {
    const path = `/${alice.id}/${nodeId}/nodeinfo`;
    const pre = await rawRequest(t.config.nodeApiUrl, path, { method: 'OPTIONS', headers: preflight() });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(WALLET);
    const answer = await rawRequest(t.config.nodeApiUrl, path, { headers: { origin: WALLET, authorization: `Bearer ${alice.token}` } });
    expect(answer.status).toBe(403); // RLN's own answer for a locked node, passed through
    expect(answer.json).toMatchObject({ code: 403 });
    expect(answer.headers['access-control-allow-origin']).toBe(WALLET);
    expect(answer.rawHeaders.filter((h) => h.toLowerCase() === 'access-control-allow-origin')).toHaveLength(1);
    const stranger = await rawRequest(t.config.nodeApiUrl, path, { headers: { origin: 'https://evil.example', authorization: `Bearer ${alice.token}` } });
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS defaults', () => {
  it('allows any origin in development and none in production', async () => {
    for (const [env, expected] of [[{}, '*'], [{ NODE_ENV: 'production' }, undefined]] as const) {
      const t = await startTestServer(env);
      try {
        const pre = await rawRequest(t.base, '/api/nodes', { method: 'OPTIONS', headers: preflight() });
        expect(pre.headers['access-control-allow-origin'], JSON.stringify(env)).toBe(expected);
      } finally {
        await t.stop();
      }
    }
  }, 60_000);
});
