// What a runtime whose daemons' output can be read only while their containers exist (Kubernetes
// pod logs) offers the log collection (node-log-collection.ts), which decides whom to follow and
// stores what comes out. Declared here, beside its user, so runtime/ depends on logs/ and not back.
import type { TimedLine } from './line-time.ts';

/**
 * Follows a node's daemon output where it can be read only while the daemon's container exists
 * (a pod log): from after `through` (the kubelet's time of the last line already stored), each
 * new line once, in order, until unfollow.
 */
export interface NodeLogFollower {
  follow(nodeId: string, through: string | null, onLine: (line: TimedLine) => void): void;
  unfollow(nodeId: string): void;
  /** How many follows are open now (one stream to the API server each). */
  following(): number;
}
