// Second factors over real HTTP (issue #38): TOTP enrolment confirmed by a first code, a sign-in
// that owes its code and reaches nothing else, codes and recovery codes used once, wrong codes
// limited and audited, turning a factor off, an owner requiring two factors of every member, and
// the operator's reset. Codes are computed here with otpauth, as an authenticator app would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';
import { operatorCommands } from '../../src/operator/commands.ts';

const PASSWORD = 'correct horse battery';

interface Signed {
  cookie: string;
  csrf: string;
  stage?: string;
}

/**
 * The code of the time step `offset` steps from now. Codes one step either side are accepted, and
 * each step once, so a test spends steps -1, 0 and +1 in turn; away from a step's edge, so the
 * server sees the same step.
 */
async function codeAt(secret: string, offset: number): Promise<string> {
  while (Date.now() % 30_000 > 28_000) await new Promise((r) => setTimeout(r, 250));
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 });
}

describe(`second factors on ${databaseLabel()}`, () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  const cookieOf = (r: { headers: Headers }) => (r.headers.get('set-cookie') ?? '').split(';')[0]!;
  const signIn = async (user: TestUser): Promise<Signed> => {
    const r = await t.call('/api/session', { method: 'POST', body: { email: user.email, password: PASSWORD } });
    expect(r.status, r.text).toBe(200);
    return { cookie: cookieOf(r), csrf: r.json.csrfToken, stage: r.json.stage };
  };
  const as = (s: Signed, method = 'GET', body?: unknown) => ({
    method,
    body,
    headers: { cookie: s.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': s.csrf }) },
  });
  const secondFactor = (s: Signed, body: unknown) => t.call('/api/session/second-factor', as(s, 'POST', body));
  const newPerson = async () => {
    const user = await t.createUser();
    await t.server.services.accounts.setPassword(user.email, PASSWORD);
    return user;
  };
  /** Enrols an authenticator for a signed-in session; spends step -1. */
  const enrol = async (s: Signed) => {
    const begun = await t.call('/api/me/2fa/totp', as(s, 'POST'));
    expect(begun.status, begun.text).toBe(200);
    const confirmed = await t.call('/api/me/2fa/totp/confirm', as(s, 'POST', { code: await codeAt(begun.json.secret, -1) }));
    expect(confirmed.status, confirmed.text).toBe(200);
    return { secret: begun.json.secret as string, recoveryCodes: confirmed.json.recoveryCodes as string[], confirmed: confirmed.json, cookie: cookieOf(confirmed) };
  };
  const auditCount = (accountId: string, action: string, outcome: string) =>
    t.server.db
      .query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE user_id = $1 AND action = $2 AND outcome = $3', [accountId, action, outcome])
      .then((rows) => rows[0]!.n);

  it('enrols an authenticator with a QR code and a first code, and answers ten recovery codes once', async () => {
    const alice = await newPerson();
    const s = await signIn(alice);
    expect(s.stage).toBe('full');
    const begun = await t.call('/api/me/2fa/totp', as(s, 'POST'));
    expect(begun.status, begun.text).toBe(200);
    expect(begun.json.otpauthUri).toMatch(/^otpauth:\/\/totp\/RLN%20Cloud:.*secret=/);
    expect(begun.json.qrCodeSvg).toContain('<svg');
    // Not in force until confirmed: a sign-in now still opens a full session.
    expect((await signIn(alice)).stage).toBe('full');
    const noBody = await t.call('/api/me/2fa/totp/confirm', as(s, 'POST'));
    expect(noBody.status, noBody.text).toBe(400);
    const wrong = await t.call('/api/me/2fa/totp/confirm', as(s, 'POST', { code: '000000' }));
    expect(wrong.status).toBe(403);
    expect(wrong.json.error.code).toBe('wrong_second_factor');
    const confirmed = await t.call('/api/me/2fa/totp/confirm', as(s, 'POST', { code: await codeAt(begun.json.secret, 0) }));
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.json.recoveryCodes).toHaveLength(10);
    expect(new Set(confirmed.json.recoveryCodes).size).toBe(10);
    const status = await t.call('/api/me/2fa', as(s));
    expect(status.json).toEqual({ password: true, totp: true, recoveryCodesLeft: 10, passkeys: 0, passkeysAvailable: false, requiredByAccount: false, owner: true, csrfToken: s.csrf });
    // Only hashes are kept.
    const stored = await t.server.db.query<{ code_hash: string }>('SELECT code_hash FROM user_recovery_codes WHERE user_id = $1', [alice.id]);
    expect(stored.map((r) => r.code_hash)).not.toContain(confirmed.json.recoveryCodes[0]);
    // A second enrolment while one is in force is refused.
    expect((await t.call('/api/me/2fa/totp', as(s, 'POST'))).json.error.code).toBe('invalid_state');
    expect(await auditCount(alice.id, 'two_factor.enabled', 'succeeded')).toBe(1);
  });

  it('a sign-in that passed the password reaches nothing but the second-factor step; the code opens a new session', async () => {
    const bob = await newPerson();
    const { secret } = await enrol(await signIn(bob));
    const half = await signIn(bob);
    expect(half.stage).toBe('second_factor');
    // Skipping the second factor by calling the API directly with the half-way cookie.
    for (const [path, method, body] of [
      ['/api/nodes', 'GET'],
      ['/api/account', 'GET'],
      ['/api/sessions', 'GET'],
      ['/api/tokens', 'POST', { name: 'skip' }],
      ['/api/nodes', 'POST', { name: 'skip' }],
    ] as const) {
      const r = await t.call(path, as(half, method, body));
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(401);
      expect(r.json.error.code).toBe('second_factor_required');
    }
    expect((await t.call('/api/session', as(half))).json.error.code).toBe('second_factor_required');
    expect((await t.call('/api/me/2fa', as(half))).json.error.code).toBe('second_factor_required');
    expect((await t.call('/api/me/2fa/totp', as(half, 'DELETE', { code: await codeAt(secret, 0) }))).json.error.code).toBe('second_factor_required');
    // The step needs the session's CSRF token like any change.
    expect((await t.call('/api/session/second-factor', { method: 'POST', body: { code: '123456' }, headers: { cookie: half.cookie } })).status).toBe(403);
    // No cookie at all: nothing to finish.
    expect((await t.call('/api/session/second-factor', { method: 'POST', body: { code: '123456' } })).status).toBe(401);
    const done = await secondFactor(half, { code: await codeAt(secret, 0) });
    expect(done.status, done.text).toBe(200);
    const full = { cookie: cookieOf(done), csrf: done.json.csrfToken };
    expect(full.cookie).not.toBe(half.cookie);
    expect((await t.call('/api/nodes', as(full))).status).toBe(200);
    // The half-way cookie signs nothing in after the step.
    expect((await t.call('/api/session', as(half))).status).toBe(401);
    expect(await auditCount(bob.id, 'two_factor.checked', 'succeeded')).toBe(1);
  });

  it('refuses a code replayed inside its window, and a recovery code used twice', async () => {
    const carol = await newPerson();
    const { secret, recoveryCodes } = await enrol(await signIn(carol));
    const code = await codeAt(secret, 0);
    expect((await secondFactor(await signIn(carol), { code })).status).toBe(200);
    const replayed = await secondFactor(await signIn(carol), { code });
    expect(replayed.status).toBe(403);
    expect(replayed.json.error.code).toBe('wrong_second_factor');
    // The step -1 code, spent at enrolment, is refused too.
    expect((await secondFactor(await signIn(carol), { code: await codeAt(secret, -1) })).status).toBe(403);

    const recovery = recoveryCodes[3]!;
    const used = await secondFactor(await signIn(carol), { recoveryCode: recovery.toUpperCase() });
    expect(used.status, used.text).toBe(200);
    const again = await secondFactor(await signIn(carol), { recoveryCode: recovery });
    expect(again.status).toBe(403);
    expect(again.json.error.code).toBe('wrong_second_factor');
    const status = await t.call('/api/me/2fa', { headers: { cookie: cookieOf(used) } });
    expect(status.json.recoveryCodesLeft).toBe(9);
    expect(await auditCount(carol.id, 'two_factor.recovery_code_used', 'succeeded')).toBe(1);
    // Both fields, or neither: a clear 400.
    const both = await secondFactor(await signIn(carol), { code: '123456', recoveryCode: recovery });
    expect(both.status).toBe(400);
    expect((await secondFactor(await signIn(carol), { code: 42 })).status).toBe(400);
    // No body at all is a clear 400 too, never a 500.
    const bare = await signIn(carol);
    const noBody = await t.call('/api/session/second-factor', { method: 'POST', headers: { cookie: bare.cookie, 'x-csrf-token': bare.csrf } });
    expect(noBody.status, noBody.text).toBe(400);
  });

  it('limits wrong codes per person and audits them: brute force stops at 5 tries', async () => {
    const dave = await newPerson();
    const { secret } = await enrol(await signIn(dave));
    const half = await signIn(dave);
    for (let i = 0; i < 5; i++) {
      const r = await secondFactor(half, { code: String(100000 + i) });
      expect(r.status).toBe(403);
    }
    // Even the right code is refused now, and a fresh sign-in does not reset the count.
    const limited = await secondFactor(await signIn(dave), { code: await codeAt(secret, 0) });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    const recovery = await secondFactor(half, { recoveryCode: 'aaaaa-aaaaa' });
    expect(recovery.status).toBe(429);
    expect(await auditCount(dave.id, 'two_factor.checked', 'failed')).toBe(5);
  });

  it('turns a factor off only with a current factor', async () => {
    const erin = await newPerson();
    const { secret, recoveryCodes } = await enrol(await signIn(erin));
    const done = await secondFactor(await signIn(erin), { code: await codeAt(secret, 0) });
    const s = { cookie: cookieOf(done), csrf: done.json.csrfToken };
    expect((await t.call('/api/me/2fa/totp', as(s, 'DELETE'))).status).toBe(400);
    const wrong = await t.call('/api/me/2fa/totp', as(s, 'DELETE', { code: '000000' }));
    expect(wrong.json.error.code).toBe('wrong_second_factor');
    // An API token is no web session: it cannot turn the factor off.
    expect((await t.call('/api/me/2fa/totp', { method: 'DELETE', token: erin.token, body: { recoveryCode: recoveryCodes[0] } })).status).toBe(401);
    expect((await t.call('/api/me/2fa/totp', as(s, 'DELETE', { recoveryCode: recoveryCodes[0] }))).status).toBe(204);
    expect((await signIn(erin)).stage).toBe('full');
    expect(await auditCount(erin.id, 'two_factor.disabled', 'succeeded')).toBe(1);
  });

  it('an owner requires two factors: a member without one can reach only enrolment until they enrol', async () => {
    const owner = await newPerson();
    const ownerSession = await signIn(owner);
    const early = await t.call('/api/account/two-factor-requirement', as(ownerSession, 'PUT', { required: true }));
    expect(early.status).toBe(409);
    expect(early.json.error.code).toBe('invalid_state');
    const { secret } = await enrol(ownerSession);
    const done = await secondFactor(await signIn(owner), { code: await codeAt(secret, 0) });
    const full = { cookie: cookieOf(done), csrf: done.json.csrfToken };

    const member = await addMember(t, owner.id, 'admin');
    await t.server.services.accounts.setPassword(member.email, PASSWORD);
    const memberBefore = await signIn(member);
    expect((await t.call('/api/account/two-factor-requirement', as(memberBefore, 'PUT', { required: true }))).json.error.code).toBe('forbidden_role');
    expect((await t.call('/api/account/two-factor-requirement', as(full, 'PUT', { required: 'yes' }))).status).toBe(400);
    expect((await t.call('/api/account/two-factor-requirement', as(full, 'PUT'))).status).toBe(400);
    const set = await t.call('/api/account/two-factor-requirement', as(full, 'PUT', { required: true }));
    expect(set.status, set.text).toBe(200);
    expect(await auditCount(owner.id, 'account.two_factors_required', 'succeeded')).toBe(1);

    const enrolling = await signIn(member);
    expect(enrolling.stage).toBe('enrol');
    const blocked = await t.call('/api/nodes', as(enrolling));
    expect(blocked.status).toBe(403);
    expect(blocked.json.error.code).toBe('two_factor_enrolment_required');
    expect((await t.call('/api/tokens', as(enrolling, 'POST', { name: 'skip' }))).json.error.code).toBe('two_factor_enrolment_required');
    expect((await t.call('/api/me/2fa', as(enrolling))).json).toMatchObject({ totp: false, recoveryCodesLeft: 0, requiredByAccount: true, owner: false });
    const enrolled = await enrol(enrolling);
    expect(enrolled.confirmed.csrfToken).toEqual(expect.any(String));
    const memberFull = { cookie: enrolled.cookie, csrf: enrolled.confirmed.csrfToken };
    expect((await t.call('/api/nodes', as(memberFull))).status).toBe(200);
    // While the rule holds the member cannot turn theirs off.
    const off = await t.call('/api/me/2fa/totp', as(memberFull, 'DELETE', { code: await codeAt(enrolled.secret, 0) }));
    expect(off.json.error.code).toBe('invalid_state');
    // Next sign-in asks the code.
    expect((await signIn(member)).stage).toBe('second_factor');
  });

  it('every second-factor route refuses an API token and a request without a session', async () => {
    const gina = await newPerson();
    const routes: Array<[string, string, unknown]> = [
      ['POST', '/api/session/second-factor', { code: '123456' }],
      ['GET', '/api/me/2fa', undefined],
      ['POST', '/api/me/2fa/totp', undefined],
      ['POST', '/api/me/2fa/totp/confirm', { code: '123456' }],
      ['DELETE', '/api/me/2fa/totp', { code: '123456' }],
      ['PUT', '/api/account/two-factor-requirement', { required: true }],
    ];
    for (const [method, path, body] of routes) {
      for (const token of [gina.token, undefined]) {
        const r = await t.call(path, { method, body, token });
        expect(r.status, `${method} ${path} ${token ? 'with a token' : 'bare'}: ${r.text}`).toBe(401);
        expect(r.json.error.code).toBe('unauthorized');
      }
    }
  });

  it("the operator's reset-2fa removes a person's factor, audited", async () => {
    const frank = await newPerson();
    await enrol(await signIn(frank));
    expect((await signIn(frank)).stage).toBe('second_factor');
    const ctx = t.server.services as unknown as Parameters<(typeof operatorCommands)['user reset-2fa']>[0];
    const reset = await operatorCommands['user reset-2fa']!(ctx, { positional: [frank.email.toUpperCase()], options: {} });
    expect(reset).toMatchObject({ reset: true, hadFactor: true });
    expect((await signIn(frank)).stage).toBe('full');
    expect(await auditCount(frank.id, 'two_factor.reset', 'succeeded')).toBe(1);
    await expect(operatorCommands['user reset-2fa']!(ctx, { positional: ['nobody@example.com'], options: {} })).rejects.toMatchObject({ code: 'user_not_found' });
  });
});
