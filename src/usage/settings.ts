// Configuration of usage metering, read by config.ts with the rest of the environment.
import { integer } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface UsageConfig {
  /** How often each replica writes the API calls it counted. */
  flushIntervalMs: number;
  /** Calls of one account a replica may hold unwritten: with N replicas a monthly limit is passed by less than N times this. */
  flushBatch: number;
  /** How long after a month ends it is closed (its figures made final). */
  monthCloseGraceMs: number;
}

export const USAGE_VARIABLES = {
  // A second: GET /api/usage of another replica lags by about this much, at one write per replica a second.
  flushIntervalMs: variable('USAGE_FLUSH_INTERVAL_MS', integer(100, 60_000), {
    default: '1000',
    doc: 'how often each replica adds the API calls it counted to the database (docs/USAGE.md)',
  }),
  // 0.04 % of Starter's 250,000 calls per replica; a busy account writes every 50 calls at most.
  flushBatch: variable('USAGE_FLUSH_BATCH', integer(1, 1_000_000), {
    default: '100',
    doc: "API calls of one account a replica may hold unwritten; with N replicas a plan's monthly limit is passed by fewer than N times this (docs/USAGE.md)",
  }),
  // Far above the flush interval, so that every replica's counts of the month are written first.
  monthCloseGraceMs: variable('USAGE_MONTH_CLOSE_GRACE_MS', integer(1000, 24 * 3600 * 1000), {
    default: '600000',
    note: '(10 min)',
    doc: 'how long after a month ends (UTC) its usage is closed: final, and announced by the audit event `usage.month_closed`',
  }),
};

export function readUsageConfig(env: Env, problems: string[]): UsageConfig {
  return readEnv(USAGE_VARIABLES, env, problems);
}
