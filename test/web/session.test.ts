// The web UI's credentials over real HTTP: sign-in, the session cookie on the API, CSRF, sign-out,
// the failed sign-in limit, the token routes, and the pages and assets the browser loads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createTenants } from '../helpers/tenants.ts';

const PASSWORD = 'correct horse battery';

describe(`web sessions and tokens on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t, { alice: 'starter' }));
    await t.server.services.accounts.setPassword(alice.email, PASSWORD);
  });
  afterAll(() => t?.stop());

  const signIn = async (email = alice.email, password = PASSWORD, headers: Record<string, string> = {}) => {
    const r = await t.call('/api/session', { method: 'POST', body: { email, password }, headers });
    const setCookie = r.headers.get('set-cookie') ?? '';
    return { ...r, setCookie, cookie: setCookie.split(';')[0]!, csrf: r.json?.csrfToken as string };
  };

  it('signs in with email and password and sets an HttpOnly SameSite cookie', async () => {
    const r = await signIn(alice.email.toUpperCase());
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ user: { id: alice.id, email: alice.email, plan: 'starter' }, csrfToken: expect.any(String), stage: 'full' });
    expect(r.setCookie).toMatch(/^rlnc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    // Plain http here: no Secure flag (a browser would drop it); under https it is __Host- and Secure.
    expect(r.setCookie).not.toMatch(/Secure/);
    const me = await t.call('/api/session', { headers: { cookie: r.cookie } });
    expect(me.json).toEqual({ user: { id: alice.id, email: alice.email, plan: 'starter' }, csrfToken: r.csrf });
  });

  it('refuses a wrong password and an unknown email alike, with 401', async () => {
    const wrong = await signIn(alice.email, 'not the password');
    const unknown = await signIn('nobody@example.com', PASSWORD);
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.json.error).toMatchObject({ code: 'unauthorized', message: 'the email or the password is wrong' });
      expect(r.setCookie).toBe('');
    }
  });

  it('refuses a sign-in posted from another site, accepts its own origin', async () => {
    const r = await signIn(alice.email, PASSWORD, { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('forbidden');
    expect((await signIn(alice.email, PASSWORD, { origin: 'null' })).status).toBe(403);
    expect((await signIn(alice.email, PASSWORD, { origin: new URL(t.base).origin })).status).toBe(200);
  });

  it('lets the session cookie call the API; changes need the CSRF header', async () => {
    const s = await signIn();
    const list = await t.call('/api/nodes', { headers: { cookie: s.cookie } });
    expect(list.status).toBe(200);
    const noCsrf = await t.call('/api/tokens', { method: 'POST', body: { name: 'ci' }, headers: { cookie: s.cookie } });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('x-csrf-token') });
    const wrongCsrf = await t.call('/api/tokens', { method: 'POST', body: { name: 'ci' }, headers: { cookie: s.cookie, 'x-csrf-token': 'x'.repeat(43) } });
    expect(wrongCsrf.status).toBe(403);
    const other = await signIn();
    const otherSessionsToken = await t.call('/api/tokens', { method: 'POST', body: { name: 'ci' }, headers: { cookie: s.cookie, 'x-csrf-token': other.csrf } });
    expect(otherSessionsToken.status).toBe(403);
    const ok = await t.call('/api/tokens', { method: 'POST', body: { name: 'ci' }, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(ok.status).toBe(200);
  });

  it('keeps bearer behaviour: an Authorization header wins over a cookie, and a bad one is 401', async () => {
    const s = await signIn();
    const bad = await t.call('/api/nodes', { token: 'nope', headers: { cookie: s.cookie } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer');
    // Bearer requests never need a CSRF header: no browser sends them by itself.
    const post = await t.call('/api/tokens', { method: 'POST', token: alice.token, body: { name: 'bearer' } });
    expect(post.status).toBe(200);
  });

  it('answers 401 for an unknown or signed-out session, and sign-out needs the CSRF header', async () => {
    const unknown = await t.call('/api/nodes', { headers: { cookie: `rlnc_session=${'A'.repeat(43)}` } });
    expect(unknown.status).toBe(401);
    expect(unknown.json.error.message).toMatch(/session has expired/);
    const s = await signIn();
    const noCsrf = await t.call('/api/session', { method: 'DELETE', headers: { cookie: s.cookie } });
    expect(noCsrf.status).toBe(403);
    const out = await t.call('/api/session', { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^rlnc_session=; .*Max-Age=0/);
    expect((await t.call('/api/nodes', { headers: { cookie: s.cookie } })).status).toBe(401);
    expect((await t.call('/api/session', { headers: { cookie: s.cookie } })).status).toBe(401);
  });

  it('limits failed sign-ins per email: 429 after five, even with the right password', async () => {
    const victim = await t.createUser();
    await t.server.services.accounts.setPassword(victim.email, PASSWORD);
    for (let i = 0; i < 5; i++) expect((await signIn(victim.email, `guess ${i}`)).status).toBe(401);
    const limited = await signIn(victim.email, PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toMatchObject({ code: 'rate_limited', details: { retryAfterSeconds: expect.any(Number) } });
    // Other accounts are not locked out by it.
    expect((await signIn()).status).toBe(200);
  });

  it('lists, creates and revokes tokens; another user’s token is 404', async () => {
    const created = await t.call('/api/tokens', { method: 'POST', token: alice.token, body: { name: 'billing', expiresInDays: 30 } });
    expect(created.status).toBe(200);
    expect(created.json.data).toMatchObject({ name: 'billing', token: expect.stringMatching(/^rlnc_/), expiresAt: expect.any(String) });
    const newToken = created.json.data.token as string;
    expect((await t.call('/api/nodes', { token: newToken })).status).toBe(200);
    const list = await t.call('/api/tokens', { token: alice.token });
    expect(list.json.tokens.find((x: any) => x.id === created.json.data.id)).toMatchObject({ name: 'billing', revokedAt: null });
    expect(JSON.stringify(list.json)).not.toContain(newToken);

    const foreign = await t.call(`/api/tokens/${created.json.data.id}`, { method: 'DELETE', token: bob.token });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('token_not_found');

    const revokedNow = await t.call(`/api/tokens/${created.json.data.id}`, { method: 'DELETE', token: alice.token });
    expect(revokedNow.status).toBe(200);
    expect((await t.call('/api/nodes', { token: newToken })).status).toBe(401);
    const bad = await t.call('/api/tokens', { method: 'POST', token: alice.token, body: { name: '', extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/name must not be empty/);
  });

  it('serves the pages and assets with a strict content security policy, no external URLs', async () => {
    for (const path of ['/sign-in', '/tokens', '/nodes', `/nodes/${'a'.repeat(32)}`, `/nodes/${'a'.repeat(32)}/connect`]) {
      const r = await t.call(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(r.text).toContain('"nodesPath":"/nodes"');
    }
    const js = await t.call('/ui/app.js');
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    const again = await t.call('/ui/app.js', { headers: { 'if-none-match': js.headers.get('etag')! } });
    expect(again.status).toBe(304);
    expect((await t.call('/ui/../config.ts')).status).toBe(404);
    const shell = await t.call('/sign-in');
    expect(shell.text).not.toMatch(/(src|href)="https?:/);
  });
});
