// Configuration of log collection and log exports, read by config.ts with the rest of the
// environment (it lives here so the log settings and their reasons sit beside the code using them).

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

type Env = Record<string, string | undefined>;

export function readLogsConfig(env: Env, problems: string[]): LogsConfig {
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = env[name] === undefined || env[name] === '' ? String(fallback) : env[name]!;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  return {
    // 10 MiB x (5 + 1) files: about 60 MiB of daemon output per node at most.
    maxFileBytes: int('LOG_FILE_MAX_BYTES', 10 * 2 ** 20, 4096, 2 ** 40),
    maxFiles: int('LOG_FILES_KEPT', 5, 1, 10_000),
    // Small enough for any proxy or browser download, large enough that few logs need two parts.
    exportPartBytes: int('LOG_EXPORT_PART_BYTES', 64 * 2 ** 20, 1024, 5 * 2 ** 30),
    exportUrlTtlSeconds: int('LOG_EXPORT_URL_TTL_SECONDS', 15 * 60, 1, 7 * 24 * 3600),
    exportRetentionHours: int('LOG_EXPORT_RETENTION_HOURS', 24, 1, 24 * 365),
    exportTimeoutMinutes: int('LOG_EXPORT_TIMEOUT_MINUTES', 60, 1, 24 * 60),
  };
}
