import { describe, expect, it } from 'vitest';
import { BILLED_STATUSES, countsAsRunning, meaningOf, SLOT_STATUSES, SUPERSEDED } from './node-status-meaning.ts';

describe('what each node status means', () => {
  // db/usage.ts's sums and migration 0021's index name RUNNING and PAUSED in SQL: they follow this table.
  it('bills RUNNING as running and PAUSED as paused time, nothing else, and a superseded node nothing', () => {
    expect(BILLED_STATUSES).toEqual(['RUNNING', 'PAUSED']);
    expect(meaningOf('RUNNING')?.billedAs).toBe('running');
    expect(meaningOf('PAUSED')?.billedAs).toBe('paused');
    expect(meaningOf(SUPERSEDED)).toMatchObject({ takesPlanSlot: false, billedAs: null });
  });

  it('gives a slot to every node not destroyed or being destroyed, and counts as running only one meant to run and not superseded', () => {
    expect(SLOT_STATUSES).toEqual(['STARTING', 'RUNNING', 'IN_PROGRESS', 'PAUSED', 'FAILED', 'STORAGE_LOST']);
    // A STORAGE_LOST node keeps its slot: a recover brings it back as the same node.
    expect(countsAsRunning({ status: 'STORAGE_LOST', desiredState: 'running', supersededBy: null })).toBe(true);
    expect(countsAsRunning({ status: 'FAILED', desiredState: 'running', supersededBy: null })).toBe(true);
    expect(countsAsRunning({ status: 'PAUSED', desiredState: 'stopped', supersededBy: null })).toBe(false);
    expect(countsAsRunning({ status: 'RUNNING', desiredState: 'running', supersededBy: 'other' })).toBe(false);
    expect(countsAsRunning({ status: 'DESTROYING', desiredState: 'destroyed', supersededBy: null })).toBe(false);
  });
});
