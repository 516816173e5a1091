// Why a node's pod is not ready yet, in words a user can act on, and whether waiting longer can
// help. A build fails at once on a fatal problem (an image that cannot be pulled, a daemon that
// exits at start-up) instead of after the whole start timeout; other problems (a volume not bound
// yet, no room on the cluster's nodes) may resolve themselves, so they are only reported when the
// timeout comes.
import type { V1Pod } from '@kubernetes/client-node';
import { CONTAINER } from './objects.ts';

export interface PodProblem {
  reason: string;
  fatal: boolean;
}

const IMAGE_ERRORS = new Set(['ErrImagePull', 'ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName']);
const CONFIG_ERRORS = new Set(['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError']);

export function podProblem(pod: V1Pod): PodProblem | undefined {
  const container = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
  const image = pod.spec?.containers.find((c) => c.name === CONTAINER)?.image ?? 'the image';
  const waiting = container?.state?.waiting;
  const message = waiting?.message ? `: ${waiting.message}` : '';
  if (waiting?.reason && IMAGE_ERRORS.has(waiting.reason)) {
    return { fatal: true, reason: `the image ${image} cannot be pulled (${waiting.reason})${message}` };
  }
  if (waiting?.reason && CONFIG_ERRORS.has(waiting.reason)) {
    return { fatal: true, reason: `the daemon's container cannot be created (${waiting.reason})${message}` };
  }
  const exited = container?.state?.terminated ?? container?.lastState?.terminated;
  if (exited) {
    return { fatal: true, reason: `the daemon exited during start-up (${exited.reason ?? 'exited'}, code ${exited.exitCode})` };
  }
  const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (unscheduled) {
    return { fatal: false, reason: `the pod cannot be scheduled (${unscheduled.reason ?? 'unknown'}): ${unscheduled.message ?? ''}`.trim() };
  }
  if (waiting?.reason) return { fatal: false, reason: `the container is waiting (${waiting.reason})${message}` };
  if (container?.state?.running) return { fatal: false, reason: 'the daemon runs but its REST port does not accept connections yet' };
  return undefined;
}
