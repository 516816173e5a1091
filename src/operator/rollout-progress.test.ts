import { describe, expect, it } from 'vitest';
import { renderRollout, type RolloutStatus } from './rollout-progress.ts';

const status = (nodes: Partial<RolloutStatus['nodes']>, state: RolloutStatus['state'] = 'running'): RolloutStatus => {
  const all = { pending: 0, upgrading: 0, deferred: 0, succeeded: 0, failed: 0, skipped: 0, ...nodes };
  return {
    version: 'v2',
    state,
    pausedReason: state === 'paused' ? '3 upgrades failed' : null,
    concurrency: 2,
    failureBudget: 2,
    total: Object.values(all).reduce((a, b) => a + b, 0),
    nodes: all,
    startedAt: '',
    updatedAt: '',
  };
};

describe('renderRollout', () => {
  it('fills the bar with the settled share of nodes', () => {
    const line = renderRollout(status({ succeeded: 5, skipped: 1, failed: 1, pending: 3 }));
    expect(line).toContain('7/10');
    expect(line).toContain(`${'█'.repeat(21)}${'░'.repeat(9)}`);
    expect(line).toContain('5 upgraded');
    expect(line).toContain('1 failed');
  });

  it('says why a rollout paused', () => {
    expect(renderRollout(status({ failed: 3, pending: 1 }, 'paused'))).toContain('paused: 3 upgrades failed');
  });

  it('shows an empty rollout as complete', () => {
    expect(renderRollout(status({}, 'completed'))).toContain(`[${'█'.repeat(30)}] 0/0 completed`);
  });
});
