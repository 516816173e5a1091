// The kubelet's time of a pod log line (timestamps=true), which is how a follow resumes without
// repeating what was stored. It is RFC 3339 with up to nine fraction digits, trailing zeros cut
// ("…:05.1Z", "…:05.123456789Z"): compared as text, "…05.1Z" would sort after "…05.12Z", so every
// time is first written with exactly nine digits, in which form text order is time order.

// The kubelet's line prefix: an RFC 3339 time, then a space.
const TIMESTAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z (.*)$/s;

export interface TimedLine {
  /** The kubelet's time with nine fraction digits: `2026-01-02T03:04:05.123456789Z`. */
  time: string;
  /** The same time in milliseconds, as the stored line's prefix carries it. */
  at: Date;
  text: string;
}

/** Splits a pod log line; undefined for one without the kubelet's time (the kubelet speaking, not the daemon). */
export function parseTimedLine(raw: string): TimedLine | undefined {
  const m = TIMESTAMPED.exec(raw);
  if (!m) return undefined;
  const fraction = (m[2] ?? '').padEnd(9, '0');
  const time = `${m[1]}.${fraction}Z`;
  const at = new Date(`${m[1]}.${fraction.slice(0, 3)}Z`);
  if (Number.isNaN(at.getTime())) return undefined;
  return { time, at, text: m[3]! };
}

/**
 * The `sinceTime` to ask the API server for when resuming after `collectedThrough`: it takes
 * whole seconds only, so it is rounded down and lines of that second already stored are dropped
 * by isNewLine.
 */
export function resumeSinceTime(collectedThrough: string | null | undefined): string | undefined {
  return collectedThrough ? `${collectedThrough.slice(0, 19)}Z` : undefined;
}

/**
 * Whether a line read after a resume is new: strictly later than the last stored one. Lines the
 * kubelet stamped with exactly the same nanosecond as the last stored line are dropped with it;
 * the kubelet stamps each line as it reads it, so two lines share a time only when both came in
 * one read — rare, and the one case where a hand-over can lose a line.
 */
export const isNewLine = (time: string, collectedThrough: string | null | undefined) => !collectedThrough || time > collectedThrough;

/** The line as stored in a segment, the process runtime's file format: `<ISO ms> stdout <line>`. */
export const storedLine = (line: TimedLine, maxBytes: number) => `${line.at.toISOString()} stdout ${line.text.slice(0, maxBytes)}\n`;
