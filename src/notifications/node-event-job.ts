// The durable job that writes the notice of a node event (a node FAILED, a backup failed). The
// database queues it in the transaction that records the event (migration 0036's trigger), so
// every path that records one is covered; the notice's own key makes a retried job send nothing twice.
import { Type } from '@sinclair/typebox';
import { declareJob } from '../jobs/job-declaration.ts';
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import type { Notifications } from './service.ts';

export const NODE_EVENT_NOTICE_JOB = declareJob({
  kind: 'notification.node-event',
  // The trigger writes this number itself (migration 0036).
  maxAttempts: 5,
  payload: Type.Object({ v: Type.Literal(1), eventId: Type.Integer() }),
  singletonKey: (p) => `notification:node-event:${p.eventId}`,
});
export type NodeEventNoticePayload = ReturnType<typeof NODE_EVENT_NOTICE_JOB.parse>;

export function nodeEventNoticeJob(deps: { notifications: Pick<Notifications, 'notifyNodeEvent'> }): JobDefinition<NodeEventNoticePayload> {
  return {
    ...NODE_EVENT_NOTICE_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(5_000, 600_000),
    handle: (p) => deps.notifications.notifyNodeEvent(p.eventId),
  };
}
