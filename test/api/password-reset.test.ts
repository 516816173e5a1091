// Password reset over real HTTP and real SMTP (issue #45): the same 202 for every address, a
// one-time link good for an hour, a new password that ends every web session of the person while
// their API tokens stay, audited; replays, expiry, weak passwords and the links of others refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

const OLD = 'the old password of alice';
const NEW = 'a brand new harbour 77';
let ipCounter = 10;
const newIp = () => `203.0.113.${ipCounter++}`;

describe(`password reset on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, TRUSTED_PROXIES: 'loopback' });
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  const post = (path: string, body: unknown, ip = newIp()) => t.call(path, { method: 'POST', body, headers: { 'x-forwarded-for': ip } });
  const signIn = async (email: string, password: string) => {
    const r = await post('/api/session', { email, password });
    return { status: r.status, code: r.json?.error?.code, cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]! };
  };
  const withPassword = async (): Promise<TestUser> => {
    const user = await t.createUser();
    await t.server.services.accounts.setPassword(user.email, OLD);
    return user;
  };
  const resetLink = async (user: TestUser, nth = 1) => {
    expect((await post('/api/password-reset', { email: user.email })).status).toBe(202);
    return linkIn((await smtp.waitFor(user.email, nth))[nth - 1]!, '/reset-password').token;
  };

  it('answers 202 with the same body for a known and an unknown address; only the known one gets a link', async () => {
    const alice = await withPassword();
    const known = await post('/api/password-reset', { email: alice.email.toUpperCase() });
    const unknown = await post('/api/password-reset', { email: `nobody-${Date.now()}@example.com` });
    expect(known.status).toBe(202);
    expect({ status: unknown.status, body: unknown.json }).toEqual({ status: known.status, body: known.json });
    const [mail] = await smtp.waitFor(alice.email);
    expect(mail!.subject).toBe('Reset your RLN Cloud password');
  });

  it('does the same work in the request for a known and an unknown address: it enqueues one job, which looks the address up', async () => {
    const known = await withPassword();
    const unknown = `nobody-${Date.now()}@example.com`;
    for (const email of [known.email, unknown]) expect((await post('/api/password-reset', { email })).status).toBe(202);
    const queued = await t.server.db.query<{ payload: { email: string } }>(`SELECT payload FROM jobs WHERE kind = 'signup.link-request' AND payload->>'purpose' = 'reset' AND payload->>'email' = ANY($1)`, [[known.email, unknown]]);
    expect(queued.map((j) => j.payload.email).sort()).toEqual([known.email, unknown].sort());
    await smtp.waitFor(known.email);
    expect(await t.server.db.query(`SELECT 1 FROM email_outbox WHERE recipient = $1`, [unknown])).toEqual([]);
  });

  it('sets the new password, ends every web session of the person, keeps their API token, and is audited', async () => {
    const alice = await withPassword();
    const [s1, s2] = [await signIn(alice.email, OLD), await signIn(alice.email, OLD)];
    expect([s1.status, s2.status]).toEqual([200, 200]);
    const token = await resetLink(alice);
    const r = await post('/api/password-reset/confirm', { token, password: NEW });
    expect(r.status).toBe(200);
    expect(r.json.email).toBe(alice.email);
    for (const s of [s1, s2]) expect((await t.call('/api/session', { headers: { cookie: s.cookie } })).status).toBe(401);
    expect((await t.call('/api/nodes', { token: alice.token })).status).toBe(200);
    expect((await signIn(alice.email, OLD)).status).toBe(401);
    expect((await signIn(alice.email, NEW)).status).toBe(200);
    const [event] = await t.server.db.query<{ details: { endedSessions: number }; outcome: string }>(
      `SELECT details, outcome FROM audit_events WHERE action = 'user.password_reset' AND user_id = $1`,
      [alice.id],
    );
    expect(event).toEqual({ details: { endedSessions: 2 }, outcome: 'succeeded' });
  });

  it('refuses a weak new password and keeps the link working', async () => {
    const bob = await withPassword();
    const token = await resetLink(bob);
    const weak = await post('/api/password-reset/confirm', { token, password: 'password1' });
    expect(weak.status).toBe(400);
    expect(weak.json.error.code).toBe('weak_password');
    expect((await post('/api/password-reset/confirm', { token, password: NEW })).status).toBe(200);
  });

  it('refuses a replayed link, an expired one, and one superseded by a newer request', async () => {
    const carol = await withPassword();
    const first = await resetLink(carol, 1);
    const second = await resetLink(carol, 2);
    expect((await post('/api/password-reset/confirm', { token: first, password: NEW })).json.error.code).toBe('invalid_link');
    expect((await post('/api/password-reset/confirm', { token: second, password: NEW })).status).toBe(200);
    const replay = await post('/api/password-reset/confirm', { token: second, password: 'yet another quiet meadow 5' });
    expect(replay.status).toBe(400);
    expect(replay.json.error.code).toBe('invalid_link');
    expect((await signIn(carol.email, NEW)).status).toBe(200);

    const dan = await withPassword();
    const late = await resetLink(dan);
    await t.server.db.query(`UPDATE email_links SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [dan.id]);
    expect((await post('/api/password-reset/confirm', { token: late, password: NEW })).json.error.code).toBe('invalid_link');
    expect((await signIn(dan.email, OLD)).status).toBe(200);
  });

  it("changes only the password of the person whose link it is, whoever uses it", async () => {
    const [erin, frank] = [await withPassword(), await withPassword()];
    const erinsLink = await resetLink(erin);
    const frankSession = await signIn(frank.email, OLD);
    const r = await t.call('/api/password-reset/confirm', { method: 'POST', body: { token: erinsLink, password: NEW }, headers: { cookie: frankSession.cookie, 'x-forwarded-for': newIp() } });
    expect(r.json.email).toBe(erin.email);
    expect((await signIn(frank.email, OLD)).status).toBe(200);
    expect((await signIn(erin.email, NEW)).status).toBe(200);
  });
});
