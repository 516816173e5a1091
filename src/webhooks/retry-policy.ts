// What happens after a delivery attempt: done, try again later (when), or stop.
import { parseDurationMs } from '../env/formats.ts';

export { parseDurationMs };

/** "0,5s,5m" -> [0, 5000, 300000]: the delay before attempt 1, 2, 3 ...; undefined when malformed. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map(parseDurationMs);
  return parts.length > 0 && parts.length <= 50 && parts.every((p) => p !== undefined) ? (parts as number[]) : undefined;
}

export const DEFAULT_RETRY_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,10h';

export interface AttemptResult {
  statusCode?: number;
  /** From a Retry-After header of a 429 or 503 answer. */
  retryAfterMs?: number;
  error?: string;
}

export type NextStep =
  | { kind: 'succeeded' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'failed'; reason: string }
  /** 410 Gone: the receiver asks us to stop sending to this URL. */
  | { kind: 'gone' };

/**
 * `attempts` is how many attempts were made, this one included. Delays get +-20% jitter so that
 * deliveries which failed together (a receiver outage) do not all retry in the same instant.
 */
export function nextStep(result: AttemptResult, attempts: number, schedule: number[], random = Math.random): NextStep {
  const status = result.statusCode;
  if (status !== undefined && status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status === 410) return { kind: 'gone' };
  if (attempts >= schedule.length) {
    return { kind: 'failed', reason: `gave up after ${attempts} attempts: ${describeResult(result)}` };
  }
  const longest = Math.max(...schedule);
  if ((status === 429 || status === 503) && result.retryAfterMs !== undefined) {
    // Honour the receiver's wish, but never wait longer than our own longest step.
    return { kind: 'retry', delayMs: Math.min(result.retryAfterMs, longest) };
  }
  const base = schedule[attempts]!;
  return { kind: 'retry', delayMs: Math.round(base * (0.8 + random() * 0.4)) };
}

export function describeResult(result: AttemptResult): string {
  if (result.error) return result.error;
  return `HTTP ${result.statusCode}`;
}

/** Retry-After is either seconds or an HTTP date; undefined when absent or malformed. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
