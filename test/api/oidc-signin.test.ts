// OpenID Connect sign-in over real HTTP against a real provider (oidc-provider) started here on
// loopback: a new person signs up through it, a returning one is found by issuer and subject, a
// signed-in person links and unlinks it; and the hostile cases: a state replayed, an email claim
// that would take over another person, ID tokens for another client or issuer or an old nonce.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import * as OTPAuth from 'otpauth';
import { createOidcProvider, startHostileProvider, throughProvider, type HostileOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';

const PASSWORD = 'correct horse battery';
let n = 0;
const unique = (tag: string) => `${tag}${++n}-${Date.now()}`;

describe(`OpenID Connect sign-in on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let idp: TestOidcProvider;
  let hostile: HostileOidcProvider;
  let t: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    idp = await createOidcProvider();
    hostile = await startHostileProvider('rln-hostile');
    t = await startTestServer({
      SMTP_URL: smtp.url,
      SIGNUP_MODE: 'open',
      OIDC_PROVIDERS: JSON.stringify([
        { id: 'corp', issuer: idp.issuer, clientId: 'rln-corp', clientSecret: 'corp-secret', label: 'Sign in with Corp' },
        { id: 'trusted', issuer: idp.issuer, clientId: 'rln-trusted', clientSecret: 'trusted-secret', verifiedEmails: true },
        { id: 'hostile', issuer: hostile.issuer, clientId: 'rln-hostile', clientSecret: 'hostile-secret' },
      ]),
    });
    const redirectUri = `${t.base}/auth/oidc/callback`;
    await idp.start([
      { clientId: 'rln-corp', clientSecret: 'corp-secret', redirectUri },
      { clientId: 'rln-trusted', clientSecret: 'trusted-secret', redirectUri },
    ]);
  });
  afterAll(async () => {
    await t?.stop();
    await idp?.stop();
    await hostile?.stop();
    await smtp?.stop();
  });

  /** The service's callback URL the provider sends the browser back to, after signing in at `provider`. */
  /** A sign-in at `provider` up to the service's callback URL, with the state cookie the start gave this "browser". */
  const atProvider = async (provider: string) => {
    const start = await fetch(`${t.base}/auth/oidc/${provider}`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    return { url: await throughProvider(start.headers.get('location')!, t.base), cookie: (start.headers.get('set-cookie') ?? '').split(';')[0]! };
  };
  const back = async (flow: { url: string; cookie: string }, sessionCookie?: string) => {
    const cookie = [flow.cookie, sessionCookie].filter(Boolean).join('; ');
    const res = await fetch(flow.url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    const text = await res.text();
    // The state cookie is cleared on every callback; the session cookie comes with a sign-in.
    const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('rlnc_session=')) ?? '';
    return { status: res.status, location: res.headers.get('location'), cookie: setCookie.split(';')[0]!, setCookie, text, code: /data-code="([a-z_]+)"/.exec(text)?.[1] };
  };
  const signInWith = async (provider: string) => back(await atProvider(provider));
  const whoIs = async (cookie: string) => (await t.call('/api/session', { headers: { cookie } })).json;
  const passwordSession = async (email: string) => {
    await t.server.services.accounts.setPassword(email, PASSWORD);
    const r = await t.call('/api/session', { method: 'POST', body: { email, password: PASSWORD } });
    return { cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: r.json.csrfToken as string };
  };

  it("asks a person with an authenticator for its code after the provider's sign-in, as after a password", async () => {
    const subject = unique('twofactor');
    idp.as(subject, { email: `${subject}@example.com`, email_verified: true });
    const first = await signInWith('corp');
    expect(first.location).toBe('/');
    const csrf = (await whoIs(first.cookie)).csrfToken as string;
    const headers = { cookie: first.cookie, 'x-csrf-token': csrf };
    const begun = await t.call('/api/me/2fa/totp', { method: 'POST', headers });
    expect(begun.status, begun.text).toBe(200);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(begun.json.secret) });
    // Away from a step's edge, so the server sees the step the code is for; each step is taken once.
    const code = async (offset: number) => {
      while (Date.now() % 30_000 > 28_000) await new Promise((r) => setTimeout(r, 250));
      return totp.generate({ timestamp: Date.now() + offset * 30_000 });
    };
    const confirmed = await t.call('/api/me/2fa/totp/confirm', { method: 'POST', headers, body: { code: await code(-1) } });
    expect(confirmed.status, confirmed.text).toBe(200);

    // The provider's sign-in alone: a half-way session, sent to the sign-in page for the code.
    idp.as(subject, { email: `${subject}@example.com`, email_verified: true });
    const again = await signInWith('corp');
    expect(again.location).toBe('/sign-in');
    const nodes = await t.call('/api/nodes', { headers: { cookie: again.cookie } });
    expect(nodes.status).toBe(401);
    expect(nodes.json.error.code).toBe('second_factor_required');
    const session = await t.call('/api/session', { headers: { cookie: again.cookie } });
    expect(session.status).toBe(401);
    expect(session.json.error).toMatchObject({ code: 'second_factor_required', details: { csrfToken: expect.any(String) } });
    const finished = await t.call('/api/session/second-factor', {
      method: 'POST',
      headers: { cookie: again.cookie, 'x-csrf-token': session.json.error.details.csrfToken },
      body: { code: await code(0) },
    });
    expect(finished.status, finished.text).toBe(200);

    // The half-way cookie is replaced by the full session's.
    expect((await t.call('/api/nodes', { headers: { cookie: again.cookie } })).status).toBe(401);
    const full = (finished.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect((await t.call('/api/nodes', { headers: { cookie: full } })).status).toBe(200);
  });

  it("takes the provider's word for several factors (its ID token's amr), and only that: one factor still asks for the code", async () => {
    const subject = unique('amr');
    const email = `${subject}@example.com`;
    idp.as(subject, { email, email_verified: true });
    const first = await signInWith('corp');
    const headers = { cookie: first.cookie, 'x-csrf-token': (await whoIs(first.cookie)).csrfToken as string };
    const begun = await t.call('/api/me/2fa/totp', { method: 'POST', headers });
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(begun.json.secret) });
    while (Date.now() % 30_000 > 28_000) await new Promise((r) => setTimeout(r, 250));
    expect((await t.call('/api/me/2fa/totp/confirm', { method: 'POST', headers, body: { code: totp.generate() } })).status).toBe(200);

    // A password and a one-time code at the provider (RFC 8176): a full session at once.
    idp.as(subject, { email, email_verified: true, amr: ['pwd', 'otp'] });
    const twoFactors = await signInWith('corp');
    expect(twoFactors.location).toBe('/');
    expect((await t.call('/api/nodes', { headers: { cookie: twoFactors.cookie } })).status).toBe(200);
    // "mfa" says the same in one word.
    idp.as(subject, { email, email_verified: true, amr: ['mfa'] });
    expect((await signInWith('corp')).location).toBe('/');
    // A password alone, or the same method named twice: the service's own second factor is asked.
    for (const amr of [['pwd'], ['pwd', 'pwd']]) {
      idp.as(subject, { email, email_verified: true, amr });
      const one = await signInWith('corp');
      expect(one.location, JSON.stringify(amr)).toBe('/sign-in');
      expect((await t.call('/api/nodes', { headers: { cookie: one.cookie } })).json.error.code).toBe('second_factor_required');
    }
  });

  it('signs a new person up through the provider (an account of their own on SIGNUP_PLAN) and finds them again by issuer and subject', async () => {
    const subject = unique('new');
    idp.as(subject, { email: `${subject}@example.com`, email_verified: true });
    const first = await signInWith('corp');
    expect(first.status).toBe(302);
    expect(first.location).toBe('/');
    expect(first.setCookie).toMatch(/^rlnc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax/);
    const me = await whoIs(first.cookie);
    expect(me.user).toEqual({ id: expect.any(String), email: `${subject}@example.com`, plan: 'starter' });

    // The email the provider states changed: still the same person, found by (issuer, subject).
    idp.as(subject, { email: `${subject}-renamed@example.com`, email_verified: true });
    const again = await signInWith('corp');
    expect(again.status).toBe(302);
    expect((await whoIs(again.cookie)).user.id).toBe(me.user.id);
    // Both sign-ins are in the account's trail, with the provider that vouched for them.
    const trail = await t.server.db.query<{ details: { provider: string } }>(`SELECT details FROM audit_events WHERE user_id = $1 AND action = 'session.sign_in' AND outcome = 'succeeded'`, [me.user.id]);
    expect(trail.map((e) => e.details.provider)).toEqual(['corp', 'corp']);
  });

  it('refuses a state used twice: the second callback opens no session', async () => {
    const subject = unique('replay');
    idp.as(subject, { email: `${subject}@example.com` });
    const flow = await atProvider('corp');
    expect((await back(flow)).status).toBe(302);
    const replay = await back(flow);
    expect(replay.status).toBe(400);
    expect(replay.code).toBe('invalid_request');
    expect(replay.text).toContain('already used or has expired');
    expect(replay.setCookie).not.toMatch(/rlnc_session=/);
  });

  it('refuses a callback URL opened in a browser that did not start the sign-in (login CSRF), and lets the one that did finish', async () => {
    const subject = unique('attacker');
    idp.as(subject, { email: `${subject}@example.com` });
    const attackers = await atProvider('corp');
    // The victim opens the attacker's callback URL: no state cookie of theirs matches it.
    const victim = await back({ url: attackers.url, cookie: '' });
    expect(victim.status).toBe(400);
    expect(victim.text).toContain('not started in this browser');
    expect(victim.setCookie).not.toMatch(/rlnc_session=/);
    const other = await atProvider('corp');
    expect((await back({ url: attackers.url, cookie: other.cookie })).status).toBe(400);
    expect((await back(attackers)).status).toBe(302);
  });

  it('never lets an email claim take over another person, unless the provider is trusted and says the email is verified', async () => {
    const alice = await t.createUser('starter', `${unique('alice')}@example.com`);
    // An untrusted provider, even with email_verified true.
    idp.as(unique('evil'), { email: alice.email.toUpperCase(), email_verified: true });
    const untrusted = await signInWith('corp');
    expect(untrusted.status).toBe(409);
    expect(untrusted.code).toBe('user_exists');
    expect(untrusted.text).toContain('link Sign in with Corp from the Account page');
    expect(untrusted.setCookie).not.toMatch(/rlnc_session=/);
    // A trusted provider whose token does not say verified.
    idp.as(unique('evil'), { email: alice.email, email_verified: false });
    const unverified = await signInWith('trusted');
    expect(unverified.status).toBe(409);
    expect(unverified.setCookie).not.toMatch(/rlnc_session=/);
    expect(await t.server.db.query('SELECT 1 FROM oidc_identities WHERE user_id = $1', [alice.id])).toEqual([]);

    // The trusted provider, with a verified email: the identity joins alice (a linked person).
    const subject = unique('alice-at-idp');
    idp.as(subject, { email: alice.email, email_verified: true });
    const linked = await signInWith('trusted');
    expect(linked.status).toBe(302);
    expect((await whoIs(linked.cookie)).user.id).toBe(alice.id);
  });

  it('links a provider from a signed-in session, signs in with it, and unlinks it only while another way in remains', async () => {
    const bob = await t.createUser('starter', `${unique('bob')}@example.com`);
    const session = await passwordSession(bob.email);
    // A link needs the session's CSRF token.
    expect((await t.call('/api/session/oidc/corp/link', { method: 'POST', headers: { cookie: session.cookie } })).status).toBe(403);
    const start = await t.call('/api/session/oidc/corp/link', { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
    expect(start.status).toBe(200);
    const subject = unique('bob-at-idp');
    // An email that is not bob's: linking from a session does not look at it.
    idp.as(subject, { email: `${subject}@elsewhere.example` });
    const linked = await back({ url: await throughProvider(start.json.redirectUrl, t.base), cookie: (start.headers.get('set-cookie') ?? '').split(';')[0]! }, session.cookie);
    expect(linked.status).toBe(302);
    expect(linked.location).toBe('/account');

    const viaProvider = await signInWith('corp');
    expect((await whoIs(viaProvider.cookie)).user.id).toBe(bob.id);
    const list = await t.call('/api/session/oidc', { headers: { cookie: session.cookie } });
    expect(list.json.data).toEqual([{ provider: 'corp', label: 'Sign in with Corp', email: `${subject}@elsewhere.example`, linkedAt: expect.any(String) }]);

    // Someone else's session cannot link the same identity away from bob.
    const carol = await t.createUser('starter', `${unique('carol')}@example.com`);
    const carolSession = await passwordSession(carol.email);
    const steal = await t.call('/api/session/oidc/corp/link', { method: 'POST', headers: { cookie: carolSession.cookie, 'x-csrf-token': carolSession.csrf } });
    const refused = await back({ url: await throughProvider(steal.json.redirectUrl, t.base), cookie: (steal.headers.get('set-cookie') ?? '').split(';')[0]! }, carolSession.cookie);
    expect(refused.status).toBe(403);

    // Bob has a password: unlinking leaves him a way in.
    const unlink = await t.call('/api/session/oidc/corp', { method: 'DELETE', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
    expect(unlink.status).toBe(200);
    const unknownAgain = await signInWith('corp');
    expect(unknownAgain.status).toBe(302);
    expect((await whoIs(unknownAgain.cookie)).user.id).not.toBe(bob.id);
  });

  it('refuses to unlink the only way in of a person who signed up through the provider', async () => {
    const subject = unique('only');
    idp.as(subject, { email: `${subject}@example.com` });
    const signedIn = await signInWith('corp');
    const { csrfToken } = await whoIs(signedIn.cookie);
    const r = await t.call('/api/session/oidc/corp', { method: 'DELETE', headers: { cookie: signedIn.cookie, 'x-csrf-token': csrfToken } });
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('invalid_state');
  });

  it('refuses ID tokens for another client, from another issuer, or with the nonce of an earlier sign-in (openid-client checks them)', async () => {
    const honest = await signInWith('hostile');
    expect(honest.status).toBe(302);
    const earlierNonce = hostile.nonces.at(-1)!;

    for (const edit of [
      (c: any) => ({ ...c, aud: 'another-client' }),
      (c: any) => ({ ...c, iss: idp.issuer }),
      (c: any) => ({ ...c, nonce: earlierNonce }),
      (c: any) => ({ ...c, nonce: undefined }),
    ]) {
      hostile.tamper(edit);
      const r = await signInWith('hostile');
      expect(r.status).toBe(401);
      expect(r.code).toBe('unauthorized');
      expect(r.setCookie).not.toMatch(/rlnc_session=/);
    }
  });

  it('a person with neither a password nor a factor deletes their account from a fresh provider sign-in, not an old one', async () => {
    const subject = unique('deleter');
    const email = `${subject}@example.com`;
    idp.as(subject, { email, email_verified: true });
    const first = await signInWith('corp');
    expect(first.location).toBe('/');
    const del = async (cookie: string, body: unknown) =>
      t.call('/api/account', { method: 'DELETE', body, headers: { cookie, 'x-csrf-token': (await whoIs(cookie)).csrfToken } });
    // Eleven minutes after the provider's sign-in, the session no longer confirms a deletion.
    await t.server.db.query("UPDATE web_sessions SET created_at = now() - interval '11 minutes' WHERE user_id = (SELECT id FROM users WHERE email = $1)", [email]);
    const stale = await del(first.cookie, {});
    expect(stale.status, stale.text).toBe(409);
    expect(stale.json.error.code).toBe('invalid_state');
    expect(stale.json.error.message).toContain('sign in again with your provider');
    const again = await signInWith('corp');
    const deleted = await del(again.cookie, {});
    expect(deleted.status, deleted.text).toBe(204);
    expect((await t.server.db.query('SELECT id FROM users WHERE email = $1', [email])).length).toBe(0);
  });

  it('answers an unknown provider with a 404 page', async () => {
    const r = await fetch(`${t.base}/auth/oidc/nobody`, { redirect: 'manual' });
    expect(r.status).toBe(404);
    expect(await r.text()).toContain('no sign-in provider is called');
  });
});

describe(`OpenID Connect sign-in when SIGNUP_MODE does not allow sign-up on ${databaseLabel()}`, () => {
  let idp: TestOidcProvider;
  let t: TestServer;

  beforeAll(async () => {
    idp = await createOidcProvider();
    t = await startTestServer({ OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'rln', OIDC_CLIENT_SECRET: 'rln-secret', OIDC_BUTTON_LABEL: 'Sign in with Corp' });
    await idp.start([{ clientId: 'rln', clientSecret: 'rln-secret', redirectUri: `${t.base}/auth/oidc/callback` }]);
  });
  afterAll(async () => {
    await t?.stop();
    await idp?.stop();
  });

  it('refuses a stranger with a clear page and creates no one', async () => {
    const subject = unique('stranger');
    idp.as(subject, { email: `${subject}@example.com`, email_verified: true });
    const start = await fetch(`${t.base}/auth/oidc/sso`, { redirect: 'manual' });
    const stateCookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
    const res = await fetch(await throughProvider(start.headers.get('location')!, t.base), { redirect: 'manual', headers: { cookie: stateCookie } });
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain('data-code="signup_closed"');
    expect(text).toContain('does not take sign-ups');
    expect(await t.server.db.query('SELECT 1 FROM users WHERE email = $1', [`${subject}@example.com`])).toEqual([]);
  });
});

describe(`OpenID Connect sign-up with SIGNUP_MODE=approval on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let idp: TestOidcProvider;
  let t: TestServer;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    idp = await createOidcProvider();
    t = await startTestServer({ SMTP_URL: smtp.url, SIGNUP_MODE: 'approval', OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: 'rln', OIDC_CLIENT_SECRET: 'rln-secret' });
    await idp.start([{ clientId: 'rln', clientSecret: 'rln-secret', redirectUri: `${t.base}/auth/oidc/callback` }]);
  });
  afterAll(async () => {
    await t?.stop();
    await idp?.stop();
    await smtp?.stop();
  });

  it('creates the account, opens no session while it waits, and signs the person in once approved', async () => {
    const subject = unique('waiting');
    const email = `${subject}@example.com`;
    idp.as(subject, { email, email_verified: true });
    const signIn = async () => {
      const start = await fetch(`${t.base}/auth/oidc/sso`, { redirect: 'manual' });
      const stateCookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
      return fetch(await throughProvider(start.headers.get('location')!, t.base), { redirect: 'manual', headers: { cookie: stateCookie } });
    };
    const waiting = await signIn();
    expect(waiting.status).toBe(403);
    expect(await waiting.text()).toContain('data-code="awaiting_approval"');
    expect(waiting.headers.get('set-cookie')).not.toMatch(/rlnc_session=/);

    await t.server.services.signup.approve(email);
    const approved = await signIn();
    expect(approved.status).toBe(302);
    expect(approved.headers.get('set-cookie')).toMatch(/rlnc_session=[A-Za-z0-9_-]{43}/);
  });
});
