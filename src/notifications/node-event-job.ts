// The durable job that writes the notice of a node event (a node FAILED, a backup failed). The
// database queues it in the transaction that records the event (migration 0036's trigger), so
// every path that records one is covered; the notice's own key makes a retried job send nothing twice.
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import type { Notifications } from './service.ts';
import { NODE_EVENT_NOTICE_JOB, type NodeEventNoticePayload } from '../jobs/catalog.ts';

export function nodeEventNoticeJob(deps: { notifications: Pick<Notifications, 'notifyNodeEvent'> }): JobDefinition<NodeEventNoticePayload> {
  return {
    ...NODE_EVENT_NOTICE_JOB,
    leaseMs: 30_000,
    backoffMs: exponentialBackoff(5_000, 600_000),
    handle: (p) => deps.notifications.notifyNodeEvent(p.eventId),
  };
}
