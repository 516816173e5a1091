// The cleanup of what email leaves behind (mail/outbox-janitor.ts) on a real database: outbox
// messages past MAIL_RETENTION_DAYS, sent or not; one-time links a day after they were used or
// expired; the keys of notified events past their two months. What is younger stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { OutboxJanitor } from '../../src/mail/outbox-janitor.ts';
import { createLogger } from '../../src/logger.ts';
import { loadConfig } from '../../src/config.ts';

describe(`the email cleanup on ${databaseLabel()}`, () => {
  let t: TestServer;
  let person: TestUser;

  beforeAll(async () => {
    t = await startTestServer({ MAIL_RETENTION_DAYS: '30' });
    person = await t.createUser();
  });
  afterAll(() => t?.stop());

  const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000);
  const ids = async (sql: string) => (await t.server.db.query<{ id: string }>(sql)).map((r) => r.id).sort();

  it('deletes old messages, dead links and old notice keys, and keeps the rest', async () => {
    const db = t.server.db;
    const message = (id: string, createdAt: Date, sentAt: Date | null) =>
      db.query(`INSERT INTO email_outbox (id, kind, recipient, subject, text_body, html_body, created_at, sent_at) VALUES ($1, 'verify-email', $2, 's', 't', 'h', $3, $4)`, [id, person.email, createdAt, sentAt]);
    await message('old-sent', ago(31 * 24), ago(31 * 24));
    await message('old-unsent', ago(31 * 24), null);
    await message('recent-sent', ago(29 * 24), ago(29 * 24));
    await message('recent-unsent', ago(1), null);
    const link = (hash: string, expiresAt: Date, usedAt: Date | null) =>
      db.query(`INSERT INTO email_links (token_hash, purpose, user_id, created_at, expires_at, used_at) VALUES ($1, 'verify', $2, $3, $4, $5)`, [hash, person.id, ago(100), expiresAt, usedAt]);
    await link('used-long-ago', ago(-20), ago(25));
    await link('expired-long-ago', ago(25), null);
    await link('used-just-now', ago(-20), ago(1));
    await link('expired-just-now', ago(1), null);
    await link('live', ago(-20), null);
    const key = (k: string, createdAt: Date) => db.query('INSERT INTO notifications_sent (key, created_at) VALUES ($1, $2)', [k, createdAt]);
    await key('api-calls:old', ago(63 * 24));
    await key('api-calls:this-month', ago(40 * 24));

    const janitor = new OutboxJanitor({ db, retentionDays: t.config.mail.retentionDays, log: createLogger('silent') });
    expect(await janitor.sweep()).toEqual({ messages: 2, links: 2, noticeKeys: 1 });
    expect(await ids('SELECT id FROM email_outbox')).toEqual(['recent-sent', 'recent-unsent']);
    expect(await ids('SELECT token_hash AS id FROM email_links')).toEqual(['expired-just-now', 'live', 'used-just-now']);
    expect(await ids('SELECT key AS id FROM notifications_sent')).toEqual(['api-calls:this-month']);
    // Nothing left to do: a second pass (another replica's) deletes nothing.
    expect(await janitor.sweep()).toEqual({ messages: 0, links: 0, noticeKeys: 0 });
  });

  it('refuses a retention under two days (the once-a-day sign-up notice reads the outbox), and keeps a month by default', () => {
    expect(() => loadConfig({ MAIL_RETENTION_DAYS: '1' })).toThrow(/MAIL_RETENTION_DAYS/);
    expect(loadConfig({}).mail.retentionDays).toBe(30);
  });
});
