import { describe, expect, it } from 'vitest';
import { requireRoomFor } from './plan-limits.ts';
import { AppError } from '../errors.ts';

const starter = { name: 'starter', maxNodes: 1, apiCallsPerMonth: 250_000, maxUsers: 1, autoUpgrade: false };
const scale = { name: 'scale', maxNodes: null, apiCallsPerMonth: null, maxUsers: null, autoUpgrade: true };

describe('requireRoomFor', () => {
  it('allows the last one below the limit and refuses the first past it, naming the limit', () => {
    expect(() => requireRoomFor(starter, 'nodes', 0)).not.toThrow();
    const refused = (() => {
      try {
        requireRoomFor(starter, 'nodes', 1);
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(refused?.code).toBe('plan_limit_reached');
    expect(refused?.status).toBe(403);
    expect(refused?.details).toEqual({ limit: 'nodes', max: 1, used: 1, plan: 'starter' });
    expect(refused?.message).toContain('allows 1 node ');
  });

  it('refuses more after a downgrade left the account above the limit, and never limits an unlimited plan', () => {
    expect(() => requireRoomFor(starter, 'users', 3)).toThrow(/allows 1 user /);
    expect(() => requireRoomFor(scale, 'nodes', 10_000)).not.toThrow();
  });
});
