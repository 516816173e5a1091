// A node's timeline (GET /api/nodes/{id}/events) and the checks of the cursors clients hand back.
// Events are read from the outbox every change writes in its own transaction (db/node-events.ts),
// so the timeline holds exactly what happened, in a commit-safe order (db/node-event-feed.ts).
import type { Database } from '../db/database.ts';
import { findUserNode } from '../db/nodes.ts';
import { isUserEventPosition, readNodeEvents, type EventPosition } from '../db/node-event-feed.ts';
import { nodeNotFound } from '../errors.ts';
import { decodeEventCursor, foreignEventCursor } from './event-cursor.ts';
import { presentEvent, type NodeEventView } from './present.ts';

export type TimelineOrder = 'oldest' | 'newest';

export interface TimelinePage {
  events: NodeEventView[];
  /**
   * Where to go on from: the last event of the page, or the `after` sent when the page is empty;
   * null only when the node has no event yet and no `after` was sent.
   */
  nextCursor: string | null;
}

export class NodeEventTimeline {
  constructor(private readonly db: Database) {}

  /**
   * Up to `limit` of the node's events after the cursor `after`: oldest first (following the node),
   * or newest first (its recent history, going back). Another user's node is a missing one.
   */
  async listNodeEvents(userId: string, nodeId: string, opts: { limit: number; after?: string; order: TimelineOrder }): Promise<TimelinePage> {
    // Decoded first: a malformed cursor is a 400 whatever the node.
    const decoded = opts.after === undefined ? null : decodeEventCursor(opts.after, 'after');
    if (!(await findUserNode(this.db, userId, nodeId))) throw nodeNotFound(nodeId);
    if (decoded && !(await isUserEventPosition(this.db, userId, decoded, nodeId))) throw foreignEventCursor('after');
    const events = (await readNodeEvents(this.db, nodeId, decoded, opts.order, opts.limit)).map(presentEvent);
    return { events, nextCursor: events.at(-1)?.cursor ?? opts.after ?? null };
  }

  /** The position a stream resumes after: one of the user's events, or a 400 naming `name`. */
  async resumePosition(userId: string, cursor: string, name: string): Promise<EventPosition> {
    const position = decodeEventCursor(cursor, name);
    if (!(await isUserEventPosition(this.db, userId, position))) throw foreignEventCursor(name);
    return position;
  }
}
