// How many upgrades a rollout runs at once: its concurrency, held back by its failure budget until
// upgrades succeed (nodes/rollout/rollout.ts, inFlightLimit).
import { describe, expect, it } from 'vitest';
import { inFlightLimit } from './rollout.ts';

describe('a rollout in flight', () => {
  it('starts with no more upgrades than the failure budget lets fail, and one more for each success', () => {
    const rollout = { concurrency: 200, failure_budget: 10 };
    expect(inFlightLimit(rollout, { failed: 0, succeeded: 0 })).toBe(11);
    expect(inFlightLimit(rollout, { failed: 0, succeeded: 11 })).toBe(22);
    expect(inFlightLimit(rollout, { failed: 4, succeeded: 11 })).toBe(18);
    expect(inFlightLimit(rollout, { failed: 0, succeeded: 5_000 })).toBe(200);
  });

  it('runs one at a time with no budget, and never more than the concurrency', () => {
    expect(inFlightLimit({ concurrency: 50, failure_budget: 0 }, { failed: 0, succeeded: 0 })).toBe(1);
    expect(inFlightLimit({ concurrency: 2, failure_budget: 3 }, { failed: 0, succeeded: 0 })).toBe(2);
    // Past the budget the rollout pauses before it asks; still, nothing more starts.
    expect(inFlightLimit({ concurrency: 5, failure_budget: 1 }, { failed: 3, succeeded: 0 })).toBe(0);
  });
});
