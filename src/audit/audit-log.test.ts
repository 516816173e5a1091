import { describe, expect, it } from 'vitest';
import { AUDIT_TEXT_MAX, AuditLog, boundedAuditText } from './audit-log.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';

const entry = { userId: 'u', actor: 'session', sourceIp: '127.0.0.1', action: 'session.sign_in' as const, target: 'x', outcome: 'failed' as const };

describe('AuditLog.record', () => {
  it('bounds every text of the event, keeping its start and saying how long it was', async () => {
    const inserted: unknown[][] = [];
    const db = { query: async (_sql: string, params: unknown[]) => (inserted.push(params), []) } as unknown as Database;
    await new AuditLog({ db, log: {} as Logger }).record({ ...entry, target: 'y'.repeat(10_000), details: { echo: 'z'.repeat(10_000) } });
    const [params] = inserted;
    expect(params![4]).toBe(`${'y'.repeat(AUDIT_TEXT_MAX)}…[truncated: 10000 characters]`);
    expect(JSON.parse(params![6] as string).echo).toBe(boundedAuditText('z'.repeat(10_000)));
    expect(boundedAuditText('short')).toBe('short');
  });

  it('a failure to record is logged at error level with the event and counted, and never thrown', async () => {
    const db = { query: async () => Promise.reject(new Error('invalid byte sequence for encoding "UTF8": 0x00')) } as unknown as Database;
    const errors: unknown[][] = [];
    let failures = 0;
    const log = { error: (...args: unknown[]) => errors.push(args) } as unknown as Logger;
    await expect(new AuditLog({ db, log, metrics: { auditRecordFailed: () => failures++ } }).record(entry)).resolves.toBeUndefined();
    expect(failures).toBe(1);
    expect(errors).toEqual([[expect.objectContaining({ audit: expect.objectContaining({ action: 'session.sign_in', target: 'x' }) }), 'could not record an audit event']]);
  });
});
