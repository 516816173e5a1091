// A person's own web sessions over real HTTP (issue #45): listed with device, address, created and
// last seen; one ended, or all others; a password change ends them; another person's are out of reach.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';

const PASSWORD = 'correct horse battery';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

interface Signed {
  cookie: string;
  csrf: string;
}

describe(`a person's web sessions on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
    bob = await t.createUser();
    for (const u of [alice, bob]) await t.server.services.accounts.setPassword(u.email, PASSWORD);
  });
  afterAll(() => t?.stop());

  const signIn = async (user: TestUser, userAgent = CHROME, password = PASSWORD): Promise<Signed> => {
    const r = await t.call('/api/session', { method: 'POST', body: { email: user.email, password }, headers: { 'user-agent': userAgent } });
    if (r.status !== 200) throw new Error(`sign-in answered ${r.status}: ${r.text}`);
    return { cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: r.json.csrfToken };
  };
  const as = (s: Signed, method = 'GET') => ({ method, headers: { cookie: s.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': s.csrf }) } });
  const alive = async (s: Signed) => (await t.call('/api/session', as(s))).status === 200;
  const endAll = () => t.call('/api/sessions', { method: 'DELETE', token: alice.token });

  it('lists the sessions with device, address, created and last seen, the current one marked', async () => {
    await endAll();
    const laptop = await signIn(alice, CHROME);
    const phone = await signIn(alice, FIREFOX);
    const r = await t.call('/api/sessions', as(laptop));
    expect(r.status, r.text).toBe(200);
    expect(r.json.sessions).toHaveLength(2);
    const byDevice = Object.fromEntries(r.json.sessions.map((s: any) => [s.device, s]));
    expect(byDevice['Chrome 131 on Linux']).toMatchObject({ current: true, address: expect.stringMatching(/127\.0\.0\.1/) });
    expect(byDevice['Firefox 133 on Windows']).toMatchObject({ current: false });
    for (const s of r.json.sessions) {
      expect(s).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), device: expect.any(String), address: expect.any(String), createdAt: expect.any(String), lastSeenAt: expect.any(String), current: expect.any(Boolean) });
    }
    // Nothing in the list signs anyone in: neither the cookie nor its hash is in it.
    expect(r.text).not.toContain(laptop.cookie.split('=')[1]);
    // With a token, no session is the current one.
    const byToken = await t.call('/api/sessions', { token: alice.token });
    expect(byToken.json.sessions.map((s: any) => s.current)).toEqual([false, false]);
    expect(await alive(phone)).toBe(true);
  });

  it('updates last seen when a session is used after a minute, not on every request', async () => {
    await endAll();
    const s = await signIn(alice);
    const first = (await t.call('/api/sessions', as(s))).json.sessions[0];
    await t.server.db.query("UPDATE web_sessions SET last_seen_at = last_seen_at - interval '2 minutes' WHERE id = $1", [first.id]);
    const aged = (await t.call('/api/sessions', { token: alice.token })).json.sessions[0];
    expect(Date.parse(aged.lastSeenAt)).toBeLessThan(Date.parse(first.lastSeenAt));
    await t.call('/api/nodes', as(s));
    const seen = (await t.call('/api/sessions', { token: alice.token })).json.sessions[0];
    expect(Date.parse(seen.lastSeenAt)).toBeGreaterThan(Date.parse(aged.lastSeenAt));
  });

  it('ends one session: its next request is 401, the others stay', async () => {
    await endAll();
    const keep = await signIn(alice);
    const lost = await signIn(alice, FIREFOX);
    const list = (await t.call('/api/sessions', as(keep))).json.sessions;
    const target = list.find((s: any) => !s.current);
    const noCsrf = await t.call(`/api/sessions/${target.id}`, { method: 'DELETE', headers: { cookie: keep.cookie } });
    expect(noCsrf.status).toBe(403);
    const r = await t.call(`/api/sessions/${target.id}`, as(keep, 'DELETE'));
    expect(r.status, r.text).toBe(204);
    expect(await alive(lost)).toBe(false);
    expect(await alive(keep)).toBe(true);
    const again = await t.call(`/api/sessions/${target.id}`, as(keep, 'DELETE'));
    expect(again.status).toBe(404);
    expect(again.json.error.code).toBe('session_not_found');
    await expect
      .poll(async () => (await t.call('/api/audit-events', { token: alice.token })).json.events.find((e: any) => e.action === 'session.ended' && e.target === target.id && e.outcome === 'succeeded'))
      .toMatchObject({ actor: 'session', actorUserId: alice.id, outcome: 'succeeded' });
  });

  it("answers another person's session id like a missing one, and leaves it alive", async () => {
    const bobs = await signIn(bob);
    const bobsId = (await t.call('/api/sessions', as(bobs))).json.sessions[0].id;
    const mine = await signIn(alice);
    for (const r of [
      await t.call(`/api/sessions/${bobsId}`, as(mine, 'DELETE')),
      await t.call(`/api/sessions/${bobsId}`, { method: 'DELETE', token: alice.token }),
    ]) {
      expect(r.status).toBe(404);
      expect(r.json.error).toMatchObject({ code: 'session_not_found', message: `session ${bobsId} was not found` });
    }
    expect(await alive(bobs)).toBe(true);
    expect((await t.call('/api/sessions', { token: alice.token })).json.sessions.map((s: any) => s.id)).not.toContain(bobsId);
    const malformed = await t.call('/api/sessions/not-an-id', { method: 'DELETE', token: alice.token });
    expect(malformed.status).toBe(400);
  });

  it('ends all other sessions, keeping the current one; with a token, all of them', async () => {
    const current = await signIn(alice);
    const others = [await signIn(alice, FIREFOX), await signIn(alice)];
    const bobs = await signIn(bob);
    const r = await t.call('/api/sessions', as(current, 'DELETE'));
    expect(r.status, r.text).toBe(200);
    expect(r.json.ended).toBeGreaterThanOrEqual(2);
    for (const s of others) expect(await alive(s)).toBe(false);
    expect(await alive(current)).toBe(true);
    expect(await alive(bobs)).toBe(true);
    const byToken = await endAll();
    expect(byToken.json).toEqual({ ended: 1 });
    expect(await alive(current)).toBe(false);
  });

  it("a password change ends every session of that person, and no one else's", async () => {
    const a = [await signIn(alice), await signIn(alice, FIREFOX)];
    const bobs = await signIn(bob);
    await t.server.services.accounts.setPassword(alice.email, 'a new password 2');
    for (const s of a) expect(await alive(s)).toBe(false);
    expect(await alive(bobs)).toBe(true);
    // Their API token stays (revocable on its own).
    expect((await t.call('/api/sessions', { token: alice.token })).status).toBe(200);
    await t.server.services.accounts.setPassword(alice.email, PASSWORD);
  });

  it('a viewer lists and ends their own sessions', async () => {
    const viewer = await addMember(t, alice.id, 'viewer');
    await t.server.services.accounts.setPassword(viewer.email, PASSWORD);
    const s = await signIn(viewer);
    const listed = await t.call('/api/sessions', as(s));
    expect(listed.json.sessions).toHaveLength(1);
    const ended = await t.call(`/api/sessions/${listed.json.sessions[0].id}`, as(s, 'DELETE'));
    expect(ended.status).toBe(204);
    expect(await alive(s)).toBe(false);
  });
});
