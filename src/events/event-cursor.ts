// Cursors of node events: opaque to clients, base64url of `event:<tx>.<id>`, the event's position
// in the commit-safe order (db/node-event-feed.ts). The same cursor serves the timeline's `after`,
// the stream's `id:` lines and Last-Event-ID. A text that is not one is refused here; whether the
// event it names is the caller's is checked against the database (timeline.ts).
import { AppError } from '../errors.ts';
import type { EventPosition } from '../db/node-event-feed.ts';

const KIND = 'event';
// No leading zeros, so one position has exactly one cursor; ids and xid8 values fit in 20 digits.
const POSITION = /^(0|[1-9][0-9]{0,19})\.([1-9][0-9]{0,15})$/;

export const encodeEventCursor = (p: EventPosition) => Buffer.from(`${KIND}:${p.tx}.${p.id}`).toString('base64url');

/** The position a cursor names; `name` is the parameter it came in, for the message. */
export function decodeEventCursor(cursor: string, name: string): EventPosition {
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = text.startsWith(`${KIND}:`) ? POSITION.exec(text.slice(KIND.length + 1)) : null;
  const id = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(id) || encodeEventCursor({ tx: m[1]!, id }) !== cursor) throw notAnEventCursor(name);
  return { tx: m[1]!, id };
}

export const notAnEventCursor = (name: string) =>
  new AppError('invalid_request', `${name} is not an event cursor this service gave: use one as it came`, { problems: [name] });

/** A well-formed cursor naming an event the caller may not read here (another user's, another node's, or gone). */
export const foreignEventCursor = (name: string) =>
  new AppError('invalid_request', `${name} names no event of yours here (or its node is gone): start again without it`, { problems: [name] });

/** Orders two positions: negative when `a` comes first. */
export function comparePositions(a: EventPosition, b: EventPosition): number {
  // Decimal text without leading zeros: the longer is the larger.
  if (a.tx !== b.tx) return a.tx.length !== b.tx.length ? a.tx.length - b.tx.length : a.tx < b.tx ? -1 : 1;
  return a.id - b.id;
}
