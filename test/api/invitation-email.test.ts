// Invitations by email (issue #45). With SMTP_URL the link goes to the invitee over SMTP (a real
// server the test runs) and never to the inviter, and accepting it proves the address: the new
// member signs in at once. Without SMTP the inviter is given the link, as before, but it proves
// nothing: whoever joins through it is sent a verification link and cannot sign in until they open it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

const PASSWORD = 'a long member password';

const signIn = (t: TestServer, email: string) => t.call('/api/session', { method: 'POST', body: { email, password: PASSWORD } });
const accept = (t: TestServer, token: string) => t.call('/api/account/invitations/accept', { method: 'POST', body: { token, password: PASSWORD } });

describe(`invitations with SMTP on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;
  let owner: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, SERVICE_NAME: 'Example Cloud' });
    owner = await t.createUser('scale');
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  it('emails the link to the invitee, never to the inviter; accepting it verifies the address, so they sign in at once', async () => {
    const email = `invitee-${Date.now()}@example.com`;
    const r = await t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email, role: 'developer' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ email, role: 'developer', emailed: true });
    expect(r.json.invitationUrl).toBeUndefined();
    const [mail] = await smtp.waitFor(email);
    expect(mail!.subject).toBe(`${owner.email} invited you to Example Cloud`);
    expect(mail!.text).toContain('as developer');
    const { token } = linkIn(mail!, '/invitation');
    // The secret is in the email only: not in the answer, not in the list, not in the outbox once sent.
    expect(r.text).not.toContain(token!);
    expect((await t.call('/api/account/invitations', { token: owner.token })).text).not.toContain(token!);
    const joined = await accept(t, token!);
    expect(joined.status, joined.text).toBe(201);
    expect(joined.json).toMatchObject({ email, role: 'developer', emailVerified: true });
    expect((await signIn(t, email)).status).toBe(200);
    // No verification email: the invitation was one.
    expect(smtp.received.filter((m) => m.to === email)).toHaveLength(1);
  });
});

describe(`invitations without SMTP on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    owner = await t.createUser('scale');
  });
  afterAll(() => t?.stop());

  it('hands the link to the inviter once; whoever joins through it verifies their address by email before signing in', async () => {
    const email = `copied-${Date.now()}@example.com`;
    const r = await t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email, role: 'viewer' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ email, emailed: false, invitationUrl: expect.stringMatching(/\/invitation#token=/) });
    // Nothing was written for the invitee: the inviter passes the link on.
    expect(await t.server.db.query('SELECT 1 FROM email_outbox WHERE recipient = $1', [email])).toEqual([]);
    const joined = await accept(t, r.json.invitationUrl.split('#token=')[1]);
    expect(joined.status, joined.text).toBe(201);
    expect(joined.json).toMatchObject({ email, role: 'viewer', emailVerified: false });
    const refused = await signIn(t, email);
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('email_not_verified');
    // The verification link waits in the outbox (a laptop: `rln-cloud mail show`), as sign-up's do.
    const [message] = await t.server.db.query<{ kind: string; text_body: string }>('SELECT kind, text_body FROM email_outbox WHERE recipient = $1', [email]);
    expect(message!.kind).toBe('verify-email');
    const token = message!.text_body.match(/\/verify-email#token=([A-Za-z0-9_-]{43})/)![1];
    const verified = await t.call('/api/signup/verify', { method: 'POST', body: { token } });
    expect(verified.status, verified.text).toBe(200);
    expect((await signIn(t, email)).status).toBe(200);
  });
});
