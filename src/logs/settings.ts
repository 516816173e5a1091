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
  /** Nodes whose pod log one replica follows at most (Kubernetes); undefined: no bound beyond its share. */
  followMaxNodes: number | undefined;
  /** A node's followed output is stored as a segment at least this often (Kubernetes). */
  segmentSeconds: number;
  /** ... or as soon as this much of it is waiting. */
  segmentMaxBytes: number;
  /** A replica that stops renewing its log claims (it died) hands its nodes on after this long. */
  claimTtlSeconds: number;
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
  // Each followed node is one open stream to the API server: a bound per replica keeps one
  // replica from holding more than its connection budget. Replicas x bound must cover the nodes.
  followMaxNodes: variable('LOG_FOLLOW_MAX_NODES', integer(1, 1_000_000), {
    unset: 'unset: no bound',
    doc: "on Kubernetes, the most nodes whose pod log one replica follows (beyond its fair share of the nodes, which it takes first); replicas x this must cover the nodes",
  }),
  // Short enough that an export misses little of the last seconds, long enough that a quiet
  // node's output makes few objects.
  segmentSeconds: variable('LOG_SEGMENT_SECONDS', integer(1, 3600), {
    default: '5',
    doc: "on Kubernetes, collected output is stored in the blob store at least this often (an export holds what was stored when it ran)",
  }),
  segmentMaxBytes: variable('LOG_SEGMENT_MAX_BYTES', integer(4096, 2 ** 30), {
    default: '1048576',
    note: '(1 MiB)',
    doc: "on Kubernetes, a node's collected output is stored as soon as this much of it waits",
  }),
  // A dead replica's nodes wait this long for a new follower; the kubelet keeps their output meanwhile.
  claimTtlSeconds: variable('LOG_CLAIM_TTL_SECONDS', integer(2, 3600), {
    default: '30',
    doc: "on Kubernetes, a replica that died hands the nodes it followed on after this long (one that stops hands them on at once)",
  }),
};

export function readLogsConfig(env: Env, problems: string[]): LogsConfig {
  return readEnv(LOG_VARIABLES, env, problems);
}
