import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOB_CATALOG, NODE_EVENT_NOTICE_JOB } from './catalog.ts';

describe('the job catalog', () => {
  it('gives every job a kind of its own, so the worker never hands one job to another handler', () => {
    const kinds = JOB_CATALOG.map((job) => job.kind);
    expect(kinds.length).toBeGreaterThan(5);
    expect(kinds.filter((kind, i) => kinds.indexOf(kind) !== i)).toEqual([]);
  });

  it('versions every payload: a payload of another version is refused, not misread', () => {
    for (const job of JOB_CATALOG) expect(() => job.parse({ v: 2 }), job.kind).toThrow(`unsupported ${job.kind} job payload`);
  });

  it('agrees with the trigger of migration 0036, which enqueues the node event notice in SQL', () => {
    const sql = readFileSync(join(import.meta.dirname, '..', 'db', 'migrations', '0036_notifications.sql'), 'utf8');
    const written = /SELECT '([^']+)', jsonb_build_object\('v', 1, 'eventId', id\), '([^']+)' \|\| id, (\d+)/.exec(sql);
    expect(written, 'the trigger still writes its job this way').not.toBeNull();
    const [, kind, keyPrefix, maxAttempts] = written!;
    expect(kind).toBe(NODE_EVENT_NOTICE_JOB.kind);
    expect(Number(maxAttempts)).toBe(NODE_EVENT_NOTICE_JOB.maxAttempts);
    expect(NODE_EVENT_NOTICE_JOB.newJob({ v: 1, eventId: 7 }).singletonKey).toBe(`${keyPrefix}7`);
    expect(NODE_EVENT_NOTICE_JOB.parse({ v: 1, eventId: 7 })).toEqual({ v: 1, eventId: 7 });
  });
});
