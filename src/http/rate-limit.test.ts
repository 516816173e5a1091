import { describe, expect, it } from 'vitest';
import { RateLimiter, rateLimitHeaders } from './rate-limit.ts';

describe('RateLimiter', () => {
  const policy = { name: 'api', limit: 3, windowSeconds: 60 };

  it('allows `limit` requests a window per key, then refuses with the time left', () => {
    const limiter = new RateLimiter(policy);
    const t0 = 1_000_000;
    expect([0, 1, 2].map((i) => limiter.take('a', t0 + i).remaining)).toEqual([2, 1, 0]);
    const refused = limiter.take('a', t0 + 10_000);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.retryAfterSeconds).toBe(50);
    // Another key has its own count.
    expect(limiter.take('b', t0 + 10_000).allowed).toBe(true);
  });

  it('slides: the previous window counts for the part of it that still overlaps', () => {
    const limiter = new RateLimiter(policy);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) limiter.take('a', t0);
    // 10 s into the next window, 5/6 of the previous 3 still count: 2.5 + 1 > 3.
    expect(limiter.take('a', t0 + 70_000).allowed).toBe(false);
    // 40 s in, 1/3 of them: 1 + 1 <= 3.
    expect(limiter.take('a', t0 + 100_000).allowed).toBe(true);
    // Two windows later nothing of them is left.
    for (let i = 0; i < 3; i++) expect(limiter.take('b', t0 + 200_000).allowed).toBe(true);
  });

  it('says it in the draft RateLimit fields, with Retry-After when refused', () => {
    const limiter = new RateLimiter(policy);
    const t0 = 2_000_000;
    expect(rateLimitHeaders(policy, limiter.take('a', t0))).toEqual({ 'ratelimit-policy': '"api";q=3;w=60', ratelimit: '"api";r=2;t=60' });
    limiter.take('a', t0);
    limiter.take('a', t0);
    expect(rateLimitHeaders(policy, limiter.take('a', t0 + 30_000))).toEqual({
      'ratelimit-policy': '"api";q=3;w=60',
      ratelimit: '"api";r=0;t=30',
      'retry-after': '30',
    });
  });

  it('is off with a limit of 0', () => {
    expect(new RateLimiter({ ...policy, limit: 0 }).enabled).toBe(false);
  });
});
