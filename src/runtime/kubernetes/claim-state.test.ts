// Whether a node's volume is gone, from its claim: a deleted claim, one being deleted, one whose
// volume went are losses; a pod waiting to be scheduled (its claim waiting to bind with it) is not.
import { describe, expect, it } from 'vitest';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { claimLoss } from './claim-state.ts';
import { podProblem } from './pod-problems.ts';

const claim = (phase: string, more: Partial<NonNullable<V1PersistentVolumeClaim['metadata']>> = {}): V1PersistentVolumeClaim => ({
  metadata: { name: 'data-rln-n1-0', ...more },
  spec: { accessModes: ['ReadWriteOnce'] },
  status: { phase },
});

describe('claimLoss', () => {
  it('a bound claim is there', () => {
    expect(claimLoss(claim('Bound'))).toBeUndefined();
  });

  it('a pod Pending for scheduling, its claim Pending with it (WaitForFirstConsumer), is a busy cluster, not a lost volume', () => {
    const pending: V1Pod = {
      metadata: { name: 'rln-n1-0' },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }],
      },
    };
    // The pod is not ready for a reason that may resolve itself...
    expect(podProblem(pending)).toMatchObject({ fatal: false, reason: expect.stringContaining('cannot be scheduled') });
    // ...and its claim, waiting to bind with it, is no loss.
    expect(claimLoss(claim('Pending'))).toBeUndefined();
  });

  it('a deleted claim, one being deleted (held by pvc-protection while its pod runs) and one whose volume went are losses', () => {
    expect(claimLoss(undefined)).toBe('its volume claim was deleted');
    expect(claimLoss(claim('Bound', { deletionTimestamp: new Date() }))).toBe('its volume claim is being deleted');
    expect(claimLoss(claim('Lost'))).toBe('its volume claim lost its persistent volume');
  });

  it('a claim missing from the cache beside a live pod is one the watch has not delivered yet; beside none, it is gone', () => {
    expect(claimLoss(undefined, true)).toBeUndefined();
    expect(claimLoss(undefined, false)).toBe('its volume claim was deleted');
    // A live pod does not hide a claim being deleted or one whose volume went.
    expect(claimLoss(claim('Bound', { deletionTimestamp: new Date() }), true)).toBe('its volume claim is being deleted');
    expect(claimLoss(claim('Lost'), true)).toBe('its volume claim lost its persistent volume');
  });
});
