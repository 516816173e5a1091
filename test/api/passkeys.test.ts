// Passkeys over real HTTP (issue #38), on a service whose PUBLIC_URL is http://localhost:<port>:
// enrolment, a passkey as the second step of a sign-in and as a sign-in without a password, and
// the refusals: a challenge replayed, another origin or relying party, another person's passkey,
// a counter that steps back, a removed member's passkey, a change without a current factor. The
// WebAuthn answers are built here by a software authenticator (test/helpers/software-authenticator.ts).
// A service on an IP address (the laptop default) answers passkeys_need_host_name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { freePort } from '../helpers/ports.ts';
import { addMember } from '../helpers/members.ts';
import { SoftwareAuthenticator, type SoftwareCredential } from '../helpers/software-authenticator.ts';
import { operatorCommands } from '../../src/operator/commands.ts';

const PASSWORD = 'passkey test password';

interface Signed {
  cookie: string;
  csrf: string;
  stage?: string;
}

describe(`passkeys on ${databaseLabel()}`, () => {
  let t: TestServer;
  let origin: string;
  let authenticator: SoftwareAuthenticator;

  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    t = await startTestServer({ API_PORT: String(port), PUBLIC_URL: origin });
    authenticator = new SoftwareAuthenticator(origin);
  });
  afterAll(() => t?.stop());

  const cookieOf = (r: { headers: Headers }, name = 'rlnc_session') =>
    r.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith(`${name}=`)) ?? '';
  const as = (s: Signed, method = 'GET', body?: unknown) => ({
    method,
    body,
    headers: { cookie: s.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': s.csrf }) },
  });
  const signIn = async (user: TestUser): Promise<Signed> => {
    const r = await t.call('/api/session', { method: 'POST', body: { email: user.email, password: PASSWORD } });
    expect(r.status, r.text).toBe(200);
    return { cookie: cookieOf(r), csrf: r.json.csrfToken, stage: r.json.stage };
  };
  const newPerson = async () => {
    const user = await t.createUser();
    await t.server.services.accounts.setPassword(user.email, PASSWORD);
    return user;
  };
  /** Enrols a passkey from a signed-in session; answers the credential the software authenticator keeps. */
  const enrol = async (s: Signed, name = 'Laptop'): Promise<SoftwareCredential> => {
    const options = await t.call('/api/me/passkeys/registration-options', as(s, 'POST'));
    expect(options.status, options.text).toBe(200);
    const { credential, response } = authenticator.register(options.json);
    const r = await t.call('/api/me/passkeys', as(s, 'POST', { name, response }));
    expect(r.status, r.text).toBe(201);
    return credential;
  };
  const factorOptions = async (s: Signed) => {
    const r = await t.call('/api/me/2fa/passkey-options', as(s, 'POST'));
    expect(r.status, r.text).toBe(200);
    return r.json;
  };
  /** Starts a password-less sign-in: the options, and the one-off cookie their challenge is tied to. */
  const signInOptions = async () => {
    const r = await t.call('/api/session/passkey/options', { method: 'POST' });
    expect(r.status, r.text).toBe(200);
    return { options: r.json, cookie: cookieOf(r, 'rlnc_passkey') };
  };
  const passkeySignIn = (cookie: string, response: unknown) => t.call('/api/session/passkey', { method: 'POST', body: { response }, headers: { cookie } });
  const auditCount = (accountId: string, action: string, outcome: string) =>
    t.server.db
      .query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE user_id = $1 AND action = $2 AND outcome = $3', [accountId, action, outcome])
      .then((rows) => rows[0]!.n);

  it('enrols a passkey, asks it at the next sign-in, and signs in with it alone', async () => {
    const alice = await newPerson();
    const s = await signIn(alice);
    expect((await t.call('/api/me/passkeys', as(s))).json).toEqual({ data: [], available: true });
    const options = await t.call('/api/me/passkeys/registration-options', as(s, 'POST'));
    expect(options.json).toMatchObject({ rp: { id: 'localhost', name: 'RLN Cloud' }, user: { name: alice.email }, attestation: 'none' });
    expect(options.json.authenticatorSelection.residentKey).toBe('required');
    const { credential, response } = authenticator.register(options.json);
    const noBody = await t.call('/api/me/passkeys', as(s, 'POST'));
    expect(noBody.status).toBe(400);
    const added = await t.call('/api/me/passkeys', as(s, 'POST', { name: 'Laptop', response }));
    expect(added.status, added.text).toBe(201);
    expect(added.json).toMatchObject({ name: 'Laptop', lastUsedAt: null });
    // The same credential again (a second enrolment of one authenticator) needs a new challenge, and is refused then too.
    const again = await t.call('/api/me/passkeys', as(s, 'POST', { name: 'Laptop', response }));
    expect(again.json.error.code).toBe('invalid_state');
    expect((await t.call('/api/me/2fa', as(s))).json).toMatchObject({ totp: false, passkeys: 1, passkeysAvailable: true });
    expect(await auditCount(alice.id, 'two_factor.enabled', 'succeeded')).toBe(1);

    // The second step of a password sign-in: the half-way session reaches nothing, then its passkey finishes it.
    const half = await signIn(alice);
    expect(half.stage).toBe('second_factor');
    expect((await t.call('/api/nodes', as(half))).json.error.code).toBe('second_factor_required');
    expect((await t.call('/api/me/passkeys', as(half))).json.error.code).toBe('second_factor_required');
    const challenge = await factorOptions(half);
    expect(challenge.allowCredentials.map((c: { id: string }) => c.id)).toEqual([credential.id]);
    const done = await t.call('/api/session/second-factor', as(half, 'POST', { passkey: authenticator.assert(credential, challenge) }));
    expect(done.status, done.text).toBe(200);
    const full = { cookie: cookieOf(done), csrf: done.json.csrfToken };
    expect((await t.call('/api/nodes', as(full))).status).toBe(200);
    expect(await auditCount(alice.id, 'two_factor.checked', 'succeeded')).toBe(1);

    // Without a password: the browser's passkey names its person.
    const { options: signInWith, cookie } = await signInOptions();
    expect(signInWith.allowCredentials ?? []).toEqual([]);
    expect(signInWith.userVerification).toBe('required');
    const signed = await passkeySignIn(cookie, authenticator.assert(credential, signInWith));
    expect(signed.status, signed.text).toBe(200);
    expect(signed.json.user.email).toBe(alice.email);
    const passwordless = { cookie: cookieOf(signed), csrf: signed.json.csrfToken };
    expect((await t.call('/api/nodes', as(passwordless))).status).toBe(200);
    const listed = (await t.call('/api/me/passkeys', as(passwordless))).json.data;
    expect(listed[0].lastUsedAt).not.toBeNull();
    const audited = await t.server.db.query<{ details: unknown }>("SELECT details FROM audit_events WHERE user_id = $1 AND action = 'session.sign_in' AND outcome = 'succeeded' ORDER BY id DESC LIMIT 1", [alice.id]);
    expect(audited[0]!.details).toMatchObject({ method: 'passkey' });
  });

  it('refuses a challenge replayed, one handed to another browser, and an answer without user verification for a password-less sign-in', async () => {
    const bob = await newPerson();
    const credential = await enrol(await signIn(bob));
    const half = await signIn(bob);
    const answer = authenticator.assert(credential, await factorOptions(half));
    expect((await t.call('/api/session/second-factor', as(half, 'POST', { passkey: answer }))).status).toBe(200);
    // The same answer again, from a new half-way session: its challenge was spent (and was another session's).
    const replayHalf = await signIn(bob);
    const replayed = await t.call('/api/session/second-factor', as(replayHalf, 'POST', { passkey: answer }));
    expect(replayed.status).toBe(403);
    expect(replayed.json.error.code).toBe('wrong_second_factor');

    const { options, cookie } = await signInOptions();
    const signInAnswer = authenticator.assert(credential, options);
    // Another browser (without the one-off cookie, or with another one) cannot use this challenge.
    expect((await passkeySignIn('', signInAnswer)).status).toBe(401);
    const other = await signInOptions();
    expect((await passkeySignIn(other.cookie, signInAnswer)).status).toBe(401);
    expect((await passkeySignIn(cookie, signInAnswer)).status).toBe(200);
    // Replayed with its own cookie: spent.
    expect((await passkeySignIn(cookie, authenticator.assert(credential, options))).status).toBe(401);
    // The authenticator did not verify its user: one factor only, no sign-in.
    const uv = await signInOptions();
    expect((await passkeySignIn(uv.cookie, authenticator.assert(credential, uv.options, { userVerified: false }))).status).toBe(401);
    // Login CSRF: another site's page cannot start or finish a sign-in.
    const foreign = await t.call('/api/session/passkey/options', { method: 'POST', headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(await auditCount(bob.id, 'two_factor.checked', 'failed')).toBe(1);
  });

  it('refuses another origin or relying party, at enrolment and at sign-in', async () => {
    const carol = await newPerson();
    const s = await signIn(carol);
    for (const ceremony of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }]) {
      const options = await t.call('/api/me/passkeys/registration-options', as(s, 'POST'));
      const { response } = authenticator.register(options.json, ceremony);
      const r = await t.call('/api/me/passkeys', as(s, 'POST', { response }));
      expect(r.status, JSON.stringify(ceremony)).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
    }
    expect((await t.call('/api/me/passkeys', as(s))).json.data).toEqual([]);
    const credential = await enrol(s);
    for (const ceremony of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }]) {
      const { options, cookie } = await signInOptions();
      expect((await passkeySignIn(cookie, authenticator.assert(credential, options, ceremony))).status, JSON.stringify(ceremony)).toBe(401);
      const half = await signIn(carol);
      const r = await t.call('/api/session/second-factor', as(half, 'POST', { passkey: authenticator.assert(credential, await factorOptions(half), ceremony) }));
      expect(r.json.error.code).toBe('wrong_second_factor');
    }
  });

  it("refuses another person's passkey as a second factor, and their passkey ids answer 404", async () => {
    const dave = await newPerson();
    const erin = await newPerson();
    const daveKey = await enrol(await signIn(dave));
    const erinKey = await enrol(await signIn(erin));
    const erinHalf = await signIn(erin);
    const r = await t.call('/api/session/second-factor', as(erinHalf, 'POST', { passkey: authenticator.assert(daveKey, await factorOptions(erinHalf)) }));
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('wrong_second_factor');
    // Dave's passkey, renamed or removed from Erin's session.
    const davesId = (await t.call('/api/me/passkeys', as(await signInFull(dave, daveKey)))).json.data[0].id;
    const erinFull = await signInFull(erin, erinKey);
    expect((await t.call(`/api/me/passkeys/${davesId}`, as(erinFull, 'PATCH', { name: 'mine' }))).json.error.code).toBe('passkey_not_found');
    expect((await t.call(`/api/me/passkeys/${davesId}`, as(erinFull, 'DELETE', { code: '123456' }))).json.error.code).toBe('passkey_not_found');
    // Without a session nothing answers.
    expect((await t.call('/api/me/passkeys')).status).toBe(401);
    expect((await t.call('/api/me/passkeys/registration-options', { method: 'POST' })).status).toBe(401);
  });

  /** A full session of `user`, by password and their passkey (`key`, or their only one enrolled by this file's `enrol`). */
  const keys = new Map<string, SoftwareCredential>();
  const signInFull = async (user: TestUser, key?: SoftwareCredential) => {
    if (key) keys.set(user.id, key);
    const half = await signIn(user);
    if (half.stage === 'full') return half;
    const done = await t.call('/api/session/second-factor', as(half, 'POST', { passkey: authenticator.assert(keys.get(user.id)!, await factorOptions(half)) }));
    expect(done.status, done.text).toBe(200);
    return { cookie: cookieOf(done), csrf: done.json.csrfToken };
  };

  it('refuses a signature counter that steps back (a cloned authenticator)', async () => {
    const frank = await newPerson();
    const credential = await enrol(await signIn(frank));
    const first = await signInOptions();
    expect((await passkeySignIn(first.cookie, authenticator.assert(credential, first.options, { counter: 5 }))).status).toBe(200);
    for (const counter of [5, 3]) {
      const { options, cookie } = await signInOptions();
      expect((await passkeySignIn(cookie, authenticator.assert(credential, options, { counter }))).status, `counter ${counter}`).toBe(401);
    }
    const next = await signInOptions();
    expect((await passkeySignIn(next.cookie, authenticator.assert(credential, next.options, { counter: 6 }))).status).toBe(200);
  });

  it("a removed member's passkey signs nothing in", async () => {
    const owner = await newPerson();
    const member = await addMember(t, owner.id, 'developer');
    await t.server.services.accounts.setPassword(member.email, PASSWORD);
    const credential = await enrol(await signIn(member));
    const before = await signInOptions();
    expect((await passkeySignIn(before.cookie, authenticator.assert(credential, before.options))).status).toBe(200);
    const removed = await t.call(`/api/account/members/${member.id}`, { method: 'DELETE', token: owner.token });
    expect(removed.status, removed.text).toBeLessThan(300);
    const after = await signInOptions();
    const r = await passkeySignIn(after.cookie, authenticator.assert(credential, after.options));
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
  });

  it('renames a passkey; removing one takes a current factor; the last one stays while the account requires two factors', async () => {
    const gina = await newPerson();
    const s = await signIn(gina);
    const laptop = await enrol(s, 'Laptop');
    await enrol(s, 'Phone');
    const full = await signInFull(gina, laptop);
    const [laptopView, phoneView] = (await t.call('/api/me/passkeys', as(full))).json.data;
    const renamed = await t.call(`/api/me/passkeys/${laptopView.id}`, as(full, 'PATCH', { name: 'Work laptop' }));
    expect(renamed.json.name).toBe('Work laptop');
    expect((await t.call(`/api/me/passkeys/${laptopView.id}`, as(full, 'PATCH', { name: '' }))).status).toBe(400);
    // No factor, a wrong shape, a passkey answer to no challenge.
    expect((await t.call(`/api/me/passkeys/${phoneView.id}`, as(full, 'DELETE'))).status).toBe(400);
    expect((await t.call(`/api/me/passkeys/${phoneView.id}`, as(full, 'DELETE', { code: '123456' }))).json.error.code).toBe('invalid_state');
    const stale = authenticator.assert(laptop, { challenge: 'bm90LWEtY2hhbGxlbmdl' });
    expect((await t.call(`/api/me/passkeys/${phoneView.id}`, as(full, 'DELETE', { passkey: stale }))).json.error.code).toBe('wrong_second_factor');
    // Without the CSRF token.
    expect((await t.call(`/api/me/passkeys/${phoneView.id}`, { method: 'DELETE', body: { passkey: stale }, headers: { cookie: full.cookie } })).status).toBe(403);
    const ok = await t.call(`/api/me/passkeys/${phoneView.id}`, as(full, 'DELETE', { passkey: authenticator.assert(laptop, await factorOptions(full)) }));
    expect(ok.status, ok.text).toBe(204);
    expect(await auditCount(gina.id, 'two_factor.disabled', 'succeeded')).toBe(1);
    // Gina owns her account: with a passkey as her only factor she may require two of every member.
    const rule = await t.call('/api/account/two-factor-requirement', as(full, 'PUT', { required: true }));
    expect(rule.status, rule.text).toBe(200);
    const last = await t.call(`/api/me/passkeys/${laptopView.id}`, as(full, 'DELETE', { passkey: authenticator.assert(laptop, await factorOptions(full)) }));
    expect(last.status).toBe(409);
    expect(last.json.error.code).toBe('invalid_state');
  });

  it('a member made to enrol by the rule enrols a passkey and is signed in fully', async () => {
    const owner = await newPerson();
    const ownerKey = await enrol(await signIn(owner));
    const ownerFull = await signInFull(owner, ownerKey);
    expect((await t.call('/api/account/two-factor-requirement', as(ownerFull, 'PUT', { required: true }))).status).toBe(200);
    const member = await addMember(t, owner.id, 'viewer');
    await t.server.services.accounts.setPassword(member.email, PASSWORD);
    const enrolling = await signIn(member);
    expect(enrolling.stage).toBe('enrol');
    expect((await t.call('/api/nodes', as(enrolling))).json.error.code).toBe('two_factor_enrolment_required');
    // Not a way round the rule: the enrolment session cannot ask a second-factor challenge or remove anything.
    expect((await t.call('/api/me/2fa/passkey-options', as(enrolling, 'POST'))).json.error.code).toBe('two_factor_enrolment_required');
    const options = await t.call('/api/me/passkeys/registration-options', as(enrolling, 'POST'));
    const { credential, response } = authenticator.register(options.json);
    const added = await t.call('/api/me/passkeys', as(enrolling, 'POST', { name: 'Phone', response }));
    expect(added.status, added.text).toBe(201);
    const full = { cookie: cookieOf(added), csrf: added.json.csrfToken };
    expect(full.cookie).not.toBe(enrolling.cookie);
    expect((await t.call('/api/nodes', as(full))).status).toBe(200);
    // A password-less sign-in with a verified passkey satisfies the rule at once.
    const { options: o, cookie } = await signInOptions();
    const signed = await passkeySignIn(cookie, authenticator.assert(credential, o));
    expect(signed.status, signed.text).toBe(200);
    expect((await t.call('/api/nodes', { headers: { cookie: cookieOf(signed) } })).status).toBe(200);
  });

  it('answers bad input with a 4xx and a code, never a 500: malformed answers, an expired challenge', async () => {
    const ivy = await newPerson();
    const s = await signIn(ivy);
    const options = await t.call('/api/me/passkeys/registration-options', as(s, 'POST'));
    const { response } = authenticator.register(options.json);
    for (const bad of [
      { response: { ...response, type: 'password' } },
      { response: { ...response, response: { clientDataJSON: 'not base64url!', attestationObject: 'AA' } } },
      { response, extra: true },
    ]) {
      const r = await t.call('/api/me/passkeys', as(s, 'POST', bad));
      expect(r.status, r.text).toBe(400);
    }
    // Well-formed but garbage: the challenge is unreadable, or the attestation is not CBOR.
    const garbage = await t.call('/api/me/passkeys', as(s, 'POST', { response: { ...response, response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' } } }));
    expect(garbage.json.error.code).toBe('invalid_state');
    const broken = await t.call('/api/me/passkeys', as(s, 'POST', { response: { ...response, response: { ...response.response, attestationObject: 'AAAA' } } }));
    expect(broken.status, broken.text).toBe(400);
    expect(broken.json.error.code).toBe('invalid_request');
    const credential = await enrol(s);
    const { options: o, cookie } = await signInOptions();
    const answer = authenticator.assert(credential, o);
    const mangled = await passkeySignIn(cookie, { ...answer, response: { ...answer.response, authenticatorData: 'AAAA', signature: 'AAAA' } });
    expect(mangled.status, mangled.text).toBe(401);
    expect((await t.call('/api/session/passkey', { method: 'POST', body: {} })).status).toBe(400);
    // Sign-ins started and left unfinished are limited per client address.
    await t.server.db.query("UPDATE webauthn_challenges SET expires_at = now() - interval '1 second' WHERE purpose = 'sign_in'");
    for (let i = 0; i < 20; i++) expect((await t.call('/api/session/passkey/options', { method: 'POST' })).status).toBe(200);
    const limited = await t.call('/api/session/passkey/options', { method: 'POST' });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    await t.server.db.query("UPDATE webauthn_challenges SET expires_at = now() - interval '1 second' WHERE purpose = 'sign_in'");
    // A challenge past its five minutes is refused.
    const late = await signInOptions();
    await t.server.db.query("UPDATE webauthn_challenges SET expires_at = now() - interval '1 second' WHERE challenge = $1", [late.options.challenge]);
    expect((await passkeySignIn(late.cookie, authenticator.assert(credential, late.options))).status).toBe(401);
  });

  it('an owner without a password confirms the deletion of their account with a passkey', async () => {
    const jo = await newPerson();
    const key = await enrol(await signIn(jo));
    const full = await signInFull(jo, key);
    // Someone who signs in with an OpenID provider or a passkey has no password.
    await t.server.db.query('UPDATE users SET password_hash = NULL WHERE id = $1', [jo.id]);
    const del = (body: unknown) => t.call('/api/account', as(full, 'DELETE', body));
    expect((await del({})).json.error.code).toBe('invalid_request');
    expect((await del({ password: 'anything' })).json.error.code).toBe('invalid_request');
    const stale = authenticator.assert(key, { challenge: 'bm90LWEtY2hhbGxlbmdl' });
    expect((await del({ passkey: stale })).json.error.code).toBe('wrong_second_factor');
    // Another person's passkey answering Jo's challenge.
    const kim = await newPerson();
    const kimKey = await enrol(await signIn(kim));
    expect((await del({ passkey: authenticator.assert(kimKey, await factorOptions(full)) })).json.error.code).toBe('wrong_second_factor');
    // With a token there is no session for a passkey's challenge to belong to.
    const byToken = await t.call('/api/account', { method: 'DELETE', token: jo.token, body: { passkey: stale } });
    expect(byToken.json.error.code).toBe('invalid_request');
    expect(await auditCount(jo.id, 'two_factor.checked', 'failed')).toBe(2);
    const deleted = await del({ passkey: authenticator.assert(key, await factorOptions(full)) });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await t.call('/api/nodes', { token: jo.token })).status).toBe(401);
    // No password and no factor: nothing to confirm with.
    const lee = await t.createUser();
    const none = await t.call('/api/account', { method: 'DELETE', token: lee.token, body: { code: '123456' } });
    expect(none.status).toBe(409);
    expect(none.json.error.code).toBe('invalid_state');
  });

  it("the operator's reset-2fa removes a person's passkeys", async () => {
    const hal = await newPerson();
    const credential = await enrol(await signIn(hal));
    const ctx = t.server.services as unknown as Parameters<(typeof operatorCommands)['user reset-2fa']>[0];
    const reset = await operatorCommands['user reset-2fa']!(ctx, { positional: [hal.email], options: {} });
    expect(reset).toMatchObject({ reset: true, hadFactor: true });
    expect((await signIn(hal)).stage).toBe('full');
    const { options, cookie } = await signInOptions();
    expect((await passkeySignIn(cookie, authenticator.assert(credential, options))).status).toBe(401);
  });
});

describe(`passkeys where PUBLIC_URL is an IP address, on ${databaseLabel()}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('answer passkeys_need_host_name, and say so in the status', async () => {
    expect(new URL(t.base).hostname).toBe('127.0.0.1');
    const user = await t.createUser();
    await t.server.services.accounts.setPassword(user.email, PASSWORD);
    const r = await t.call('/api/session', { method: 'POST', body: { email: user.email, password: PASSWORD } });
    const s = { cookie: (r.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: r.json.csrfToken };
    const headers = { cookie: s.cookie, 'x-csrf-token': s.csrf };
    for (const path of ['/api/me/passkeys/registration-options', '/api/me/2fa/passkey-options', '/api/session/passkey/options']) {
      const refused = await t.call(path, { method: 'POST', headers });
      expect(refused.status, path).toBe(409);
      expect(refused.json.error.code).toBe('passkeys_need_host_name');
      expect(refused.json.error.message).toContain('host name');
    }
    expect((await t.call('/api/me/passkeys', { headers })).json).toEqual({ data: [], available: false });
    expect((await t.call('/api/me/2fa', { headers })).json.passkeysAvailable).toBe(false);
  });
});
