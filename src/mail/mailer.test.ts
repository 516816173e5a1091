import { describe, expect, it } from 'vitest';
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { Mailer } from './mailer.ts';
import { renderEmail } from './templates.ts';

function recordingDb() {
  const statements: string[] = [];
  const db = { query: async (sql: string) => (statements.push(sql), []), signalAfterCommit: () => {} } as unknown as Queryable;
  return { db, statements };
}

function recordingLog() {
  const lines: Array<{ details: Record<string, unknown>; message: string }> = [];
  return { lines, log: { info: (details: Record<string, unknown>, message: string) => void lines.push({ details, message }) } as unknown as Logger };
}

const LINK = 'http://127.0.0.1:8080/verify-email#token=abc';

describe('Mailer', () => {
  it('without SMTP_URL keeps the message in the outbox, enqueues no sending, and logs its link', async () => {
    const { db, statements } = recordingDb();
    const { lines, log } = recordingLog();
    const mailer = new Mailer({ config: { smtpUrl: undefined, from: 'x', serviceName: 'RLN Cloud', retentionDays: 30 }, publicUrl: 'http://127.0.0.1:8080', log });
    await mailer.enqueue(db, { kind: 'verify-email', to: 'a@example.com', link: LINK });
    expect(statements.some((s) => s.includes('INSERT INTO email_outbox'))).toBe(true);
    expect(statements.some((s) => s.includes('INSERT INTO jobs'))).toBe(false);
    expect(lines).toEqual([expect.objectContaining({ details: expect.objectContaining({ to: 'a@example.com', link: LINK }) })]);
  });

  it('with SMTP_URL enqueues the sending job in the same transaction, and logs no link', async () => {
    const { db, statements } = recordingDb();
    const { lines, log } = recordingLog();
    const mailer = new Mailer({ config: { smtpUrl: 'smtp://127.0.0.1:25', from: 'x', serviceName: 'RLN Cloud', retentionDays: 30 }, publicUrl: 'http://127.0.0.1:8080', log });
    await mailer.enqueue(db, { kind: 'verify-email', to: 'a@example.com', link: LINK });
    expect(statements.filter((s) => s.includes('INSERT INTO email_outbox') || s.includes('INSERT INTO jobs'))).toHaveLength(2);
    expect(lines).toEqual([]);
  });
});

describe('renderEmail', () => {
  it('puts the service name and PUBLIC_URL in both bodies and escapes every value in the HTML', () => {
    const m = renderEmail('password-reset', 'https://x.example/reset-password#token="><script>', { serviceName: 'A & B <Cloud>', publicUrl: 'https://x.example' });
    expect(m.subject).toBe('Reset your A & B <Cloud> password');
    expect(m.text).toContain('https://x.example/reset-password#token="><script>');
    expect(m.text).toContain('A & B <Cloud>, https://x.example');
    expect(m.html).not.toContain('<script>');
    expect(m.html).not.toContain('<Cloud>');
    expect(m.html).toContain('href="https://x.example/reset-password#token=&quot;&gt;&lt;script&gt;"');
  });
});
