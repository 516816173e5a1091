// Configuration of log collection and log exports, read by config.ts with the rest of the
// environment (it lives here so the log settings and their reasons sit beside the code using them).
import { integer } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface LogsConfig {
  /** A node's current daemon log is rotated once it reaches this size. */
  maxFileBytes: number;
  /** Rotated files kept per node; with maxFileBytes this bounds a node's log disk use. */
  maxFiles: number;
  /** An export part is closed once its gzip output reaches about this size (one URL per part). */
  exportPartBytes: number;
  /** Lifetime of a download URL; S3 allows at most 7 days. */
  exportUrlTtlSeconds: number;
  /** Exports and their archives are deleted this long after they were requested. */
  exportRetentionHours: number;
  /** An export still unfinished this long after it was requested is marked FAILED, never left hanging. */
  exportTimeoutMinutes: number;
}

export const LOG_VARIABLES = {
  // 10 MiB x (5 + 1) files: about 60 MiB of daemon output per node at most.
  maxFileBytes: variable('LOG_FILE_MAX_BYTES', integer(4096, 2 ** 40), {
    default: '10485760',
    note: '(10 MiB)',
    doc: "a node's current `daemon.log` is rotated when it reaches this size",
  }),
  maxFiles: variable('LOG_FILES_KEPT', integer(1, 10_000), {
    default: '5',
    doc: 'rotated log files kept per node: with the one above, at most ~60 MiB of output per node',
  }),
  // Small enough for any proxy or browser download, large enough that few logs need two parts.
  exportPartBytes: variable('LOG_EXPORT_PART_BYTES', integer(1024, 5 * 2 ** 30), {
    default: '67108864',
    note: '(64 MiB)',
    doc: 'an export archive is split into gzip parts of about this size, one download URL each',
  }),
  // Short: a leaked URL stops working soon; long enough to start a download by hand.
  exportUrlTtlSeconds: variable('LOG_EXPORT_URL_TTL_SECONDS', integer(1, 7 * 24 * 3600), {
    default: '900',
    note: '(15 min)',
    doc: "how long a download URL works (at most 7 days, S3's limit)",
  }),
  exportRetentionHours: variable('LOG_EXPORT_RETENTION_HOURS', integer(1, 24 * 365), {
    default: '24',
    doc: 'exports and their archives are deleted this long after they were requested',
  }),
  exportTimeoutMinutes: variable('LOG_EXPORT_TIMEOUT_MINUTES', integer(1, 24 * 60), {
    default: '60',
    doc: 'an export still unfinished this long after it was requested is marked `FAILED`',
  }),
};

export function readLogsConfig(env: Env, problems: string[]): LogsConfig {
  return readEnv(LOG_VARIABLES, env, problems);
}
