// Self-service sign-up over real HTTP and real SMTP (issue #45): open mode end to end, the strength
// check, email verification and its links, no enumeration by any answer, sign-in refused until
// verified, the operator's approval, and the limits on every public route. Each test speaks from a
// client address of its own (X-Forwarded-For, TRUSTED_PROXIES=loopback) so the per-address limits
// of one do not spend another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { operatorCommands } from '../../src/operator/commands.ts';

const STRONG = 'violet kettle orbit 93';
let n = 0;
const newEmail = (tag = 'p') => `${tag}${++n}-${Date.now()}@example.com`;
let ipCounter = 10;
const newIp = () => `198.51.100.${ipCounter++}`;

function client(t: TestServer, ip: string) {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.call(path, { method: 'POST', body, headers: { 'x-forwarded-for': ip, ...headers } });
  return {
    signUp: (email: string, password = STRONG) => post('/api/signup', { email, password }),
    verify: (token: string | undefined) => post('/api/signup/verify', { token }),
    resend: (email: string) => post('/api/signup/resend', { email }),
    requestReset: (email: string) => post('/api/password-reset', { email }),
    confirmReset: (token: string | undefined, password = 'a brand new harbour 77') => post('/api/password-reset/confirm', { token, password }),
    signIn: async (email: string, password = STRONG) => {
      const r = await post('/api/session', { email, password });
      return { ...r, cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]! };
    },
  };
}

/** Every "email me a link" request has been worked through by its job (signup/link-request-job.ts). */
async function requestsAnswered(t: TestServer) {
  const deadline = Date.now() + 30_000;
  while ((await t.server.db.query(`SELECT 1 FROM jobs WHERE kind = 'signup.link-request' AND state IN ('queued', 'running')`)).length > 0) {
    if (Date.now() > deadline) throw new Error('link requests still pending');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`sign-up in open mode on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, SIGNUP_MODE: 'open', TRUSTED_PROXIES: 'loopback' });
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  it('signs a person up, emails a verification link, refuses sign-in until it is opened, then lets them in on SIGNUP_PLAN', async () => {
    const c = client(t, newIp());
    const email = newEmail();
    const r = await c.signUp(email.toUpperCase());
    expect(r.status).toBe(202);
    const [mail] = await smtp.waitFor(email);
    expect(mail!.subject).toBe('Verify your email address for RLN Cloud');
    const { token } = linkIn(mail!, '/verify-email');

    const early = await c.signIn(email);
    expect(early.status).toBe(403);
    expect(early.json.error.code).toBe('email_not_verified');

    const verified = await c.verify(token);
    expect(verified.status).toBe(200);
    expect(verified.json).toEqual({ email, awaitingApproval: false });

    const s = await c.signIn(email);
    expect(s.status).toBe(200);
    expect(s.json.user).toMatchObject({ email, plan: 'starter' });
    const me = await t.call('/api/account', { headers: { cookie: s.cookie } });
    expect(me.status).toBe(200);
    const trail = await t.server.db.query<{ action: string }>(`SELECT action FROM audit_events WHERE target = $1 ORDER BY id`, [email]);
    expect(trail.map((e) => e.action)).toEqual(['user.signed_up', 'session.sign_in', 'user.email_verified', 'session.sign_in']);
  });

  it('refuses weak, common and too short passwords, and malformed addresses, with a clear 400', async () => {
    const c = client(t, newIp());
    for (const password of ['password123', 'qwertyuiop', 'short', 'Password1!']) {
      const r = await c.signUp(newEmail(), password);
      expect(r.status, password).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'weak_password', details: { field: 'password' } });
    }
    const own = newEmail('own');
    expect((await c.signUp(own, `${own}1`)).json.error?.code).toBe('weak_password');
    const bad = await c.signUp('not an address', STRONG);
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_request');
  });

  it('answers a known address exactly as a new one, emails its owner "someone tried" once a day, and changes nothing', async () => {
    const owner = await t.createUser();
    await t.server.services.accounts.setPassword(owner.email, 'the owners own password 1');
    const c = client(t, newIp());
    const known = await c.signUp(owner.email, STRONG);
    const fresh = await c.signUp(newEmail(), STRONG);
    expect(known.status).toBe(202);
    expect({ status: known.status, body: known.json }).toEqual({ status: fresh.status, body: fresh.json });
    const [notice] = await smtp.waitFor(owner.email);
    expect(notice!.subject).toBe('Someone tried to sign up to RLN Cloud with your address');
    expect(linkIn(notice!, '/reset-password').token).toBeUndefined();
    // A second attempt the same day: the same answer, no second notice.
    expect((await client(t, newIp()).signUp(owner.email, STRONG)).json).toEqual(fresh.json);
    expect(await t.server.db.query(`SELECT 1 FROM email_outbox WHERE recipient = $1`, [owner.email])).toHaveLength(1);
    // The owner's password and account are untouched; each attempt is in their trail.
    expect((await c.signIn(owner.email, 'the owners own password 1')).status).toBe(200);
    expect((await c.signIn(owner.email, STRONG)).status).toBe(401);
    expect(await t.server.db.query(`SELECT 1 FROM audit_events WHERE action = 'user.signup_attempted' AND user_id = $1`, [owner.id])).toHaveLength(2);
  });

  it('gives a wrong password the same 401 for an unverified person, a verified one and an unknown address', async () => {
    const c = client(t, newIp());
    const pending = newEmail();
    await c.signUp(pending);
    const answers = await Promise.all([pending, newEmail()].map((e) => c.signIn(e, 'not the password at all')));
    for (const r of answers) expect({ status: r.status, code: r.json.error.code, message: r.json.error.message }).toEqual({ status: 401, code: 'unauthorized', message: 'the email or the password is wrong' });
  });

  it('refuses a replayed link, an expired link, a link of another purpose, and a superseded one', async () => {
    const c = client(t, newIp());
    const email = newEmail();
    await c.signUp(email);
    const first = linkIn((await smtp.waitFor(email))[0]!, '/verify-email').token;
    // Resend: the new link works, the first no longer does.
    expect((await c.resend(email)).status).toBe(202);
    const second = linkIn((await smtp.waitFor(email, 2))[1]!, '/verify-email').token;
    expect((await c.verify(first)).json.error.code).toBe('invalid_link');
    // A verification link is no reset link.
    expect((await c.confirmReset(second)).json.error.code).toBe('invalid_link');
    expect((await c.verify(second)).status).toBe(200);
    const replay = await c.verify(second);
    expect(replay.status).toBe(400);
    expect(replay.json.error.code).toBe('invalid_link');

    const late = newEmail();
    await c.signUp(late);
    const lateToken = linkIn((await smtp.waitFor(late))[0]!, '/verify-email').token;
    await t.server.db.query(`UPDATE email_links SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM users WHERE email = $1)`, [late]);
    expect((await c.verify(lateToken)).json.error.code).toBe('invalid_link');
  });

  it("gives an address squatted by someone who cannot read its mail back to its owner when they sign up", async () => {
    const victim = newEmail('victim');
    const squatter = client(t, newIp());
    expect((await squatter.signUp(victim, 'squatters secret phrase 42')).status).toBe(202);
    const owner = client(t, newIp());
    expect((await owner.signUp(victim, STRONG)).status).toBe(202);
    const [squattersLink, ownersLink] = (await smtp.waitFor(victim, 2)).map((m) => linkIn(m, '/verify-email').token);
    expect((await owner.verify(squattersLink)).json.error.code).toBe('invalid_link');
    expect((await owner.verify(ownersLink)).status).toBe(200);
    expect((await owner.signIn(victim, STRONG)).status).toBe(200);
    expect((await squatter.signIn(victim, 'squatters secret phrase 42')).status).toBe(401);
  });

  it('verifies only the person whose link it is, whoever opens it', async () => {
    const c = client(t, newIp());
    const [a, b] = [newEmail('a'), newEmail('b')];
    await c.signUp(a);
    await c.signUp(b);
    const aToken = linkIn((await smtp.waitFor(a))[0]!, '/verify-email').token;
    expect((await c.verify(aToken)).json.email).toBe(a);
    expect((await c.signIn(b)).json.error.code).toBe('email_not_verified');
  });

  it('answers resend the same for an unknown, a verified and an unverified address; only the unverified one gets a link', async () => {
    const c = client(t, newIp());
    const verified = await t.createUser();
    const unverified = newEmail();
    await c.signUp(unverified);
    await smtp.waitFor(unverified);
    const answers = await Promise.all([newEmail(), verified.email, unverified].map((e) => c.resend(e)));
    for (const r of answers) expect({ status: r.status, body: r.json }).toEqual({ status: 202, body: answers[0]!.json });
    await smtp.waitFor(unverified, 2);
    await requestsAnswered(t);
    expect(await t.server.db.query(`SELECT 1 FROM email_outbox WHERE recipient = $1`, [verified.email])).toHaveLength(0);
  });

  it('limits sign-ups per client address and links per email address, whether or not the address is known', async () => {
    const c = client(t, newIp());
    for (let i = 0; i < 5; i++) expect((await c.signUp(newEmail())).status).toBe(202);
    const refused = await c.signUp(newEmail());
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    const known = await t.createUser();
    const unknown = newEmail();
    for (const email of [known.email, unknown]) {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push((await client(t, newIp()).requestReset(email)).status);
      expect(answers, email).toEqual([202, 202, 202, 429]);
    }
  });

  it('stops a client address that tries link after link', async () => {
    const c = client(t, newIp());
    const codes = [];
    for (let i = 0; i < 21; i++) codes.push((await c.verify('A'.repeat(43))).json.error.code);
    expect(codes.slice(0, 20).every((code) => code === 'invalid_link')).toBe(true);
    expect(codes[20]).toBe('rate_limited');
  });
});

describe(`sign-up in approval mode on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, SIGNUP_MODE: 'approval', SIGNUP_MAX_PER_HOUR: '3', SIGNUP_PLAN: 'growth', TRUSTED_PROXIES: 'loopback' });
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  const ctx = () => t.server.services as unknown as Parameters<(typeof operatorCommands)['signup list']>[0];

  it('keeps a verified account waiting until the operator approves it, and removes one they reject', async () => {
    const [yes, no] = [newEmail('yes'), newEmail('no')];
    for (const email of [yes, no]) {
      const c = client(t, newIp());
      expect((await c.signUp(email)).status).toBe(202);
      const verified = await c.verify(linkIn((await smtp.waitFor(email))[0]!, '/verify-email').token);
      expect(verified.json).toEqual({ email, awaitingApproval: true });
      const s = await c.signIn(email);
      expect(s.status).toBe(403);
      expect(s.json.error.code).toBe('awaiting_approval');
    }
    const listed = (await operatorCommands['signup list']!(ctx(), { positional: [], options: {} })) as { awaiting: Array<{ email: string }> };
    expect(listed.awaiting.map((a) => a.email)).toEqual([yes, no]);

    await operatorCommands['signup approve']!(ctx(), { positional: [yes], options: {} });
    const [, approved] = await smtp.waitFor(yes, 2);
    expect(approved!.subject).toBe('Your RLN Cloud account is ready');
    const s = await client(t, newIp()).signIn(yes);
    expect(s.status).toBe(200);
    expect(s.json.user.plan).toBe('growth');

    await operatorCommands['signup reject']!(ctx(), { positional: [no], options: {} });
    expect(await t.server.db.query('SELECT 1 FROM users WHERE email = $1', [no])).toEqual([]);
    await expect(operatorCommands['signup approve']!(ctx(), { positional: [yes], options: {} })).rejects.toMatchObject({ code: 'invalid_state' });
    const trail = await t.server.db.query<{ action: string }>(`SELECT action FROM audit_events WHERE action IN ('signup.approved', 'signup.rejected') ORDER BY id`);
    expect(trail.map((e) => e.action)).toEqual(['signup.approved', 'signup.rejected']);
  });

  it('refuses sign-ups past SIGNUP_MAX_PER_HOUR across every client address', async () => {
    // Two of the three were spent above.
    expect((await client(t, newIp()).signUp(newEmail())).status).toBe(202);
    const r = await client(t, newIp()).signUp(newEmail());
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('rate_limited');
  });
});

describe(`sign-up when SIGNUP_MODE does not allow it on ${databaseLabel()}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('refuses with 403 signup_closed under the default invite-only', async () => {
    const r = await t.call('/api/signup', { method: 'POST', body: { email: newEmail(), password: STRONG } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('signup_closed');
  });
});
