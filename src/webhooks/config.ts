// Configuration of webhook delivery, read by config.ts with the rest of the environment (it lives
// here so each setting and its reason sit beside the code using it).
import { join, resolve } from 'node:path';
import { DEFAULT_RETRY_SCHEDULE, parseDurationMs, parseRetrySchedule } from './retry-policy.ts';

export interface WebhookConfig {
  /**
   * Loopback, private, link-local targets allowed. Safe default: true only outside production,
   * where the service and the receiver are usually on one laptop; production refuses them so a
   * user cannot make the service call internal endpoints (SSRF).
   */
  allowPrivateTargets: boolean;
  /** Delay before attempt 1, 2, ...; as many attempts as entries. Spans ~32 h by default. */
  retryScheduleMs: number[];
  /** One attempt (connect, send, answer) may take this long; 15 s like other webhook senders. */
  timeoutMs: number;
  /** Deliveries in flight at once; each goes to a different node, so ordering is unaffected. */
  concurrency: number;
  /** The signing keyring (or a bare PEM private key); created at first start when missing. */
  signingKeyFile: string;
  /** How long a rotated-out key keeps signing beside the new one, so receivers can switch over. */
  keyOverlapMs: number;
}

type Env = Record<string, string | undefined>;

export function readWebhookConfig(env: Env, problems: string[], ctx: { dataDir: string; production: boolean }): WebhookConfig {
  const raw = (name: string, fallback: string) => (env[name] === undefined || env[name] === '' ? fallback : env[name]!);

  const allowRaw = raw('WEBHOOK_ALLOW_PRIVATE_TARGETS', String(!ctx.production)).toLowerCase();
  if (!['true', 'false', '1', '0', 'yes', 'no'].includes(allowRaw)) problems.push(`WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false, got "${allowRaw}"`);

  const scheduleRaw = raw('WEBHOOK_RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE);
  const schedule = parseRetrySchedule(scheduleRaw);
  if (!schedule) problems.push(`WEBHOOK_RETRY_SCHEDULE must be 1-50 comma-separated durations like 0,5s,5m,2h, got "${scheduleRaw}"`);

  const duration = (name: string, fallback: string, minMs: number) => {
    const text = raw(name, fallback);
    const ms = parseDurationMs(text);
    if (ms === undefined || ms < minMs) {
      problems.push(`${name} must be a duration of at least ${minMs} ms (e.g. 15s, 500ms, 24h), got "${text}"`);
      return parseDurationMs(fallback)!;
    }
    return ms;
  };
  const concurrencyRaw = raw('WEBHOOK_CONCURRENCY', '32');
  if (!/^\d+$/.test(concurrencyRaw) || Number(concurrencyRaw) < 1 || Number(concurrencyRaw) > 1000) {
    problems.push(`WEBHOOK_CONCURRENCY must be an integer between 1 and 1000, got "${concurrencyRaw}"`);
  }

  return {
    allowPrivateTargets: ['true', '1', 'yes'].includes(allowRaw),
    retryScheduleMs: schedule ?? parseRetrySchedule(DEFAULT_RETRY_SCHEDULE)!,
    timeoutMs: duration('WEBHOOK_TIMEOUT', '15s', 100),
    concurrency: /^\d+$/.test(concurrencyRaw) ? Math.max(1, Number(concurrencyRaw)) : 32,
    signingKeyFile: resolve(raw('WEBHOOK_SIGNING_KEY_FILE', join(ctx.dataDir, 'webhook-signing-keys.json'))),
    keyOverlapMs: duration('WEBHOOK_KEY_OVERLAP', '24h', 0),
  };
}
