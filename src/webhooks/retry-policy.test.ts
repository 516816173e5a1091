import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, nextStep, parseDurationMs, parseRetryAfter, parseRetrySchedule } from './retry-policy.ts';

describe('retry policy', () => {
  it('parses the default schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE)).toEqual([0, 5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('250')).toBe(250);
    expect(parseRetrySchedule('0,5x')).toBeUndefined();
    expect(parseRetrySchedule('')).toBeUndefined();
  });

  const schedule = [0, 1000, 60_000];
  it('succeeds on any 2xx and stops on 410', () => {
    expect(nextStep({ statusCode: 200 }, 1, schedule)).toEqual({ kind: 'succeeded' });
    expect(nextStep({ statusCode: 299 }, 1, schedule)).toEqual({ kind: 'succeeded' });
    expect(nextStep({ statusCode: 410 }, 1, schedule)).toEqual({ kind: 'gone' });
  });

  it('retries on the schedule with +-20% jitter, then gives up', () => {
    expect(nextStep({ statusCode: 500 }, 1, schedule, () => 0)).toEqual({ kind: 'retry', delayMs: 800 });
    expect(nextStep({ statusCode: 500 }, 1, schedule, () => 0.999999)).toEqual({ kind: 'retry', delayMs: 1200 });
    expect(nextStep({ error: 'ECONNREFUSED' }, 2, schedule, () => 0.5)).toEqual({ kind: 'retry', delayMs: 60_000 });
    expect(nextStep({ statusCode: 302 }, 3, schedule)).toEqual({ kind: 'failed', reason: 'gave up after 3 attempts: HTTP 302' });
  });

  it('honours Retry-After on 429 and 503 only, capped by the longest step', () => {
    expect(nextStep({ statusCode: 429, retryAfterMs: 30_000 }, 1, schedule)).toEqual({ kind: 'retry', delayMs: 30_000 });
    expect(nextStep({ statusCode: 503, retryAfterMs: 10 * 3_600_000 }, 1, schedule)).toEqual({ kind: 'retry', delayMs: 60_000 });
    expect(nextStep({ statusCode: 500, retryAfterMs: 30_000 }, 1, schedule, () => 0.5)).toEqual({ kind: 'retry', delayMs: 1000 });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
