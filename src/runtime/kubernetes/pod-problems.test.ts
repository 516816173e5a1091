import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { podProblem } from './pod-problems.ts';

const pod = (status: V1Pod['status']): V1Pod => ({ spec: { containers: [{ name: 'rln', image: 'localhost/devnode:v9' }] }, status });
const container = (fields: object) => ({ containerStatuses: [{ name: 'rln', image: 'x', imageID: '', ready: false, restartCount: 0, ...fields }] });

describe('why a node pod is not ready', () => {
  it('fails at once on an image that cannot be pulled', () => {
    const p = podProblem(pod(container({ state: { waiting: { reason: 'ErrImageNeverPull', message: 'not present' } } })));
    expect(p).toEqual({ fatal: true, reason: 'the image localhost/devnode:v9 cannot be pulled (ErrImageNeverPull): not present' });
    expect(podProblem(pod(container({ state: { waiting: { reason: 'ImagePullBackOff' } } })))?.fatal).toBe(true);
  });

  it('fails at once when the daemon exits during start-up', () => {
    const p = podProblem(pod(container({ state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } })));
    expect(p).toEqual({ fatal: true, reason: 'the daemon exited during start-up (Error, code 1)' });
  });

  it('waits, saying why, on a pod that cannot be scheduled yet', () => {
    const p = podProblem(pod({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.' }] }));
    expect(p).toEqual({ fatal: false, reason: 'the pod cannot be scheduled (Unschedulable): 0/1 nodes are available: 1 Insufficient cpu.' });
  });

  it('has nothing to say about a pod that is simply starting', () => {
    expect(podProblem(pod({}))).toBeUndefined();
    expect(podProblem(pod(container({ state: { waiting: { reason: 'ContainerCreating' } } })))?.fatal).toBe(false);
  });
});
