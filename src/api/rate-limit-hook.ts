// Rate limits of the management API (http/rate-limit.ts), per API token and per user, checked once the
// caller is known (so an unauthenticated flood costs no counter). Every answer carries the draft
// RateLimit fields of the tighter limit; past it, 429 rate_limited with Retry-After.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import { RateLimiter, rateLimitHeaders, type RateLimitDecision } from '../http/rate-limit.ts';

export interface ApiRateLimits {
  perTokenPerMinute: number;
  perUserPerMinute: number;
}

export function limitApiRate(scope: FastifyInstance, limits: ApiRateLimits) {
  const perToken = new RateLimiter({ name: 'token', limit: limits.perTokenPerMinute, windowSeconds: 60 });
  const perUser = new RateLimiter({ name: 'user', limit: limits.perUserPerMinute, windowSeconds: 60 });
  if (!perToken.enabled && !perUser.enabled) return;
  scope.addHook('onRequest', async (request, reply) => {
    const user = request.user;
    if (!user) return;
    const checks: Array<[RateLimiter, RateLimitDecision]> = [];
    // A web session has no token: its user's sessions together take the per-token limit, so a
    // script holding a session cookie is limited as a token is (issue #36). A request refused by
    // one limit is counted by none, so a client that backs off is not charged for its refusals.
    const credential = user.tokenId || `session:${user.id}`;
    if (perToken.enabled) checks.push([perToken, perToken.take(credential)]);
    if (perUser.enabled && checks.every(([, d]) => d.allowed)) {
      const decision = perUser.take(user.id);
      if (!decision.allowed && checks.length > 0) perToken.refund(credential);
      checks.push([perUser, decision]);
    }
    if (checks.length === 0) return;
    const [limiter, decision] = checks.find(([, d]) => !d.allowed) ?? checks.reduce((a, b) => (b[1].remaining < a[1].remaining ? b : a));
    reply.headers(rateLimitHeaders(limiter.policy, decision));
    if (!decision.allowed) {
      const which = limiter === perToken ? (user.tokenId ? 'this API token' : 'your web sessions') : 'your account';
      throw new AppError('rate_limited', `too many requests for ${which}: at most ${limiter.policy.limit} a minute; try again in ${decision.retryAfterSeconds} s`, {
        retryAfterSeconds: decision.retryAfterSeconds,
      });
    }
  });
}
