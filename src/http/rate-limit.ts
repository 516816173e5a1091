// Request rate limits, per key (a token, a user, a client certificate), in this process's memory:
// a sliding window approximated from two fixed windows (the previous window's count weighted by
// how much of it still overlaps), which costs two map lookups per request and bounds memory to the
// keys seen in the last two windows. Per replica by design: sharing counts through the database
// would add a write to every request; with N replicas a client gets at most N times the limit.
// The answers follow the IETF draft "RateLimit header fields for HTTP" (RateLimit-Policy and
// RateLimit, structured fields) and RFC 9110's Retry-After.

export interface RateLimitPolicy {
  /** Name in the RateLimit-Policy header, e.g. "api" or "gateway". */
  name: string;
  /** Requests allowed per window; 0 turns the limit off. */
  limit: number;
  windowSeconds: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Seconds until the window allows a request again (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/** Beyond this many keys in one window the oldest window is dropped early: memory stays bounded. */
const MAX_KEYS = 200_000;

export class RateLimiter {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private windowStart = 0;
  private readonly windowMs: number;

  constructor(readonly policy: RateLimitPolicy) {
    this.windowMs = policy.windowSeconds * 1000;
  }

  get enabled() {
    return this.policy.limit > 0;
  }

  /** Counts one request of `key` and says whether it is allowed. */
  take(key: string, now = Date.now()): RateLimitDecision {
    this.roll(now);
    const elapsed = (now - this.windowStart) / this.windowMs;
    const resetSeconds = Math.max(1, Math.ceil((this.windowStart + this.windowMs - now) / 1000));
    const count = this.current.get(key) ?? 0;
    const estimate = (this.previous.get(key) ?? 0) * (1 - elapsed) + count;
    if (estimate + 1 > this.policy.limit) {
      return { allowed: false, remaining: 0, retryAfterSeconds: resetSeconds, resetSeconds };
    }
    if (this.current.size >= MAX_KEYS && !this.current.has(key)) this.previous = new Map();
    this.current.set(key, count + 1);
    return { allowed: true, remaining: Math.max(0, Math.floor(this.policy.limit - estimate - 1)), retryAfterSeconds: 0, resetSeconds };
  }

  /** Takes back a request `take` counted (another limit refused it after all). */
  refund(key: string) {
    const count = this.current.get(key);
    if (count !== undefined && count > 0) this.current.set(key, count - 1);
  }

  private roll(now: number) {
    if (now < this.windowStart + this.windowMs) return;
    const windows = Math.floor((now - this.windowStart) / this.windowMs);
    // One window on: the current becomes the previous; more than one: both are history.
    this.previous = windows === 1 ? this.current : new Map();
    this.current = new Map();
    this.windowStart = this.windowStart === 0 ? now : this.windowStart + windows * this.windowMs;
  }
}

/** The draft's response fields for a decision under `policy`. */
export function rateLimitHeaders(policy: RateLimitPolicy, d: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'ratelimit-policy': `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`,
    ratelimit: `"${policy.name}";r=${d.remaining};t=${d.resetSeconds}`,
  };
  if (!d.allowed) headers['retry-after'] = String(d.retryAfterSeconds);
  return headers;
}
