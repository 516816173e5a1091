// The email outbox over real SMTP: a message written with the change it tells about is sent by a
// job to an SMTP server the test runs (smtp-server), with a Message-ID that stays the same on every
// attempt; retried with backoff while the server is down; and kept in the outbox, never sent, when
// no SMTP_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { freePort } from '../helpers/ports.ts';
import { operatorCommands } from '../../src/operator/commands.ts';
import { SENT_BODY } from '../../src/db/email-outbox.ts';

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`the email outbox on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, SERVICE_NAME: 'Example Cloud', MAIL_FROM: 'Example Cloud <hello@example.com>' });
    alice = await t.createUser();
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  it('sends a message over SMTP with its plain-text and HTML bodies, the service name, PUBLIC_URL and a stable Message-ID', async () => {
    const r = await t.call('/api/password-reset', { method: 'POST', body: { email: alice.email } });
    expect(r.status).toBe(202);
    const [mail] = await smtp.waitFor(alice.email);
    expect(mail!.subject).toBe('Reset your Example Cloud password');
    const link = linkIn(mail!, '/reset-password');
    expect(link.url.startsWith(`${t.base}/reset-password#token=`)).toBe(true);
    expect(mail!.html).toContain(`href="${link.url}"`);
    expect(mail!.text).toContain(t.base);
    const [row] = await t.server.db.query<{ id: string; sent_at: Date | null }>('SELECT id, sent_at FROM email_outbox WHERE recipient = $1', [alice.email]);
    expect(mail!.messageId).toBe(`<${row!.id}@127.0.0.1>`);
    const sent = await until('marked sent', async () => (await t.server.db.query<{ sent_at: Date | null }>('SELECT sent_at FROM email_outbox WHERE id = $1', [row!.id]))[0]?.sent_at ?? undefined);
    expect(sent).toBeInstanceOf(Date);
  });

  it('sends a message whose sending was interrupted again, with the same Message-ID, and only once it is marked sent', async () => {
    const bob = await t.createUser();
    await t.call('/api/password-reset', { method: 'POST', body: { email: bob.email } });
    const [first] = await smtp.waitFor(bob.email);
    const [row] = await t.server.db.query<{ id: string }>('SELECT id FROM email_outbox WHERE recipient = $1', [bob.email]);
    await until('marked sent', async () => ((await t.server.db.query('SELECT 1 FROM email_outbox WHERE id = $1 AND sent_at IS NOT NULL', [row!.id])).length ? true : undefined));
    // Once sent, the bodies (and the link's secret in them) are gone from the database.
    const [kept] = await t.server.db.query<{ text_body: string; html_body: string }>('SELECT text_body, html_body FROM email_outbox WHERE id = $1', [row!.id]);
    expect(kept).toEqual({ text_body: SENT_BODY, html_body: SENT_BODY });
    expect(kept!.text_body).not.toContain(linkIn(first!, '/reset-password').token);
    // A crash after the SMTP server took it and before it was marked sent (the row as it was then): the job runs again.
    await t.server.db.query('UPDATE email_outbox SET sent_at = NULL, text_body = $2, html_body = $3 WHERE id = $1', [row!.id, first!.text, first!.html]);
    await t.server.db.query(`INSERT INTO jobs (kind, payload, max_attempts, run_at) VALUES ('email.send', $1::jsonb, 3, now())`, [JSON.stringify({ v: 1, messageId: row!.id })]);
    const both = await smtp.waitFor(bob.email, 2);
    expect(both[1]!.messageId).toBe(first!.messageId);
    // Marked sent now: a further run of the job sends nothing.
    await until('marked sent again', async () => ((await t.server.db.query('SELECT 1 FROM email_outbox WHERE id = $1 AND sent_at IS NOT NULL', [row!.id])).length ? true : undefined));
    await t.server.db.query(`INSERT INTO jobs (kind, payload, max_attempts, run_at) VALUES ('email.send', $1::jsonb, 3, now())`, [JSON.stringify({ v: 1, messageId: row!.id })]);
    await until('the extra job done', async () => ((await t.server.db.query(`SELECT 1 FROM jobs WHERE kind = 'email.send' AND state IN ('queued', 'running')`)).length === 0 ? true : undefined));
    expect(smtp.received.filter((m) => m.to === bob.email)).toHaveLength(2);
  });
});

describe(`email while the SMTP server is down on ${databaseLabel()}`, () => {
  it('retries with backoff until the SMTP server answers, then sends', async () => {
    const port = await freePort();
    const t = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${port}` });
    let smtp: TestSmtpServer | undefined;
    try {
      const carol = await t.createUser();
      expect((await t.call('/api/password-reset', { method: 'POST', body: { email: carol.email } })).status).toBe(202);
      const failed = await until('a failed attempt', async () =>
        (await t.server.db.query<{ attempts: number; last_error: string; state: string }>(`SELECT attempts, last_error, state FROM jobs WHERE kind = 'email.send' AND last_error IS NOT NULL`))[0],
      );
      expect(failed.state).toBe('queued');
      smtp = await startSmtpServer(port);
      const [mail] = await smtp.waitFor(carol.email, 1, 60_000);
      expect(linkIn(mail!, '/reset-password').token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    } finally {
      await t.stop();
      await smtp?.stop();
    }
  });
});

describe(`email without SMTP_URL (a laptop) on ${databaseLabel()}`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('keeps messages in the outbox, enqueues no sending, and `mail list|show` print them with their link', async () => {
    const dan = await t.createUser();
    expect((await t.call('/api/password-reset', { method: 'POST', body: { email: dan.email } })).status).toBe(202);
    const ctx = t.server.services as unknown as Parameters<(typeof operatorCommands)['mail list']>[0];
    // The request's job writes the message (signup/link-request-job.ts).
    await until('the message written', async () => ((await t.server.db.query('SELECT 1 FROM email_outbox WHERE recipient = $1', [dan.email])).length ? true : undefined));
    const listed = (await operatorCommands['mail list']!(ctx, { positional: [], options: { to: dan.email.toUpperCase() } })) as { messages: Array<{ id: string; kind: string; sentAt: string | null }> };
    expect(listed.messages).toEqual([expect.objectContaining({ kind: 'password-reset', to: dan.email, sentAt: null })]);
    const shown = (await operatorCommands['mail show']!(ctx, { positional: [listed.messages[0]!.id], options: {} })) as { text: string };
    expect(shown.text).toMatch(new RegExp(`${t.base}/reset-password#token=[A-Za-z0-9_-]{43}`));
    expect(await t.server.db.query(`SELECT 1 FROM jobs WHERE kind = 'email.send'`)).toEqual([]);
    await expect(operatorCommands['mail show']!(ctx, { positional: ['nope'], options: {} })).rejects.toMatchObject({ code: 'not_found' });
  });
});
