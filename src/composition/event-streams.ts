// Node events as an API: the timeline reader and the process's event streams, woken by every
// node event this process commits (other replicas' are found by the streams' poll), and the watch
// that ends a member's streams within a second of their removal or role change.
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { EventHub } from '../events/event-hub.ts';
import { NodeEventTimeline } from '../events/timeline.ts';
import { MemberWatch } from '../events/member-watch.ts';
import type { AccountService } from '../accounts/service.ts';

// Beside the event count: a few large events must not hold megabytes either.
const STREAM_BUFFER_BYTES = 1024 * 1024;

export function buildEventStreams(db: Database, config: Config, accounts: Pick<AccountService, 'onMemberChanged' | 'onTokenRevoked'>, log: Logger) {
  const { maxStreams, maxStreamsPerUser, bufferEvents, heartbeatMs, pollIntervalMs } = config.eventStreams;
  const hub = new EventHub({ db, maxStreams, maxStreamsPerUser, bufferEvents, heartbeatMs, pollIntervalMs, log });
  db.commitSignals.on('node-events', () => hub.wake());
  return {
    timeline: new NodeEventTimeline(db),
    hub,
    memberWatch: new MemberWatch({ db, accounts, log }),
    buffer: { maxEvents: bufferEvents, maxBytes: STREAM_BUFFER_BYTES },
  };
}

export type EventStreams = ReturnType<typeof buildEventStreams>;
