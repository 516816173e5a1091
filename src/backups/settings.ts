// Configuration of node backups, read by config.ts with the rest of the environment.
import { integer } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface BackupsConfig {
  /** Finished backups are deleted this many days after they were made (the newest of a live node excepted). */
  retentionDays: number;
  /** An export's final backup is deleted this many days after it was made, whatever ordinary retention says. */
  exportRetentionDays: number;
  /** Successful backups kept per node; the oldest go first once there are more. */
  keepPerNode: number;
  /** Lifetime of a backup's download URL. */
  urlTtlSeconds: number;
  /** Largest backup file a user may upload to restore from. */
  maxUploadBytes: number;
  /** How long the node may take to write its backup file (RLN's POST /backup). */
  nodeTimeoutMs: number;
  /** Bytes of uploaded backups one user may keep stored at once. */
  uploadQuotaBytes: number;
  /** Uploaded backups one user may keep stored at once. */
  uploadQuotaCount: number;
}

export const BACKUP_VARIABLES = {
  // A month of daily backups, and never fewer than the newest one of a live node.
  retentionDays: variable('BACKUP_RETENTION_DAYS', integer(1, 3650), {
    default: '30',
    doc: "finished backups are deleted this many days after they were made; a live node's newest successful backup is always kept",
  }),
  // An exported node's wallet lives only in the customer's copy: a month to download it (again),
  // whether the node is destroyed or not, before the service keeps nothing of it.
  exportRetentionDays: variable('BACKUP_EXPORT_RETENTION_DAYS', integer(1, 3650), {
    default: '30',
    doc: "an export's final backup (POST /api/nodes/{id}/export) is deleted this many days after it was made, whatever BACKUP_RETENTION_DAYS and BACKUP_RETENTION_COUNT say and whether its node was destroyed or not",
  }),
  keepPerNode: variable('BACKUP_RETENTION_COUNT', integer(1, 10_000), {
    default: '10',
    doc: 'successful backups kept per node: the oldest beyond this many are deleted',
  }),
  // The original hosted service's download links were valid 30 minutes.
  urlTtlSeconds: variable('BACKUP_URL_TTL_SECONDS', integer(1, 7 * 24 * 3600), {
    default: '1800',
    note: '(30 min)',
    doc: "how long a backup's download URL works (at most 7 days, S3's limit)",
  }),
  // Far above a node's wallet state (a few MB to a few hundred); bounds what a client can make us store.
  maxUploadBytes: variable('BACKUP_UPLOAD_MAX_BYTES', integer(1024, 2 ** 40), {
    default: '1073741824',
    note: '(1 GiB)',
    doc: 'largest backup file a user may upload to restore a node from',
  }),
  // Uploads belong to no node, so nothing else bounds what one user keeps: a few full-size files.
  uploadQuotaBytes: variable('BACKUP_UPLOAD_QUOTA_BYTES', integer(1024, 2 ** 50), {
    default: '4294967296',
    note: '(4 GiB)',
    doc: 'bytes of uploaded backups one user may keep at once; an upload past it answers 409 `backup_quota_exceeded` (delete some first)',
  }),
  // Enough to try a restore a few times; retention (BACKUP_RETENTION_DAYS) removes old uploads too.
  uploadQuotaCount: variable('BACKUP_UPLOAD_QUOTA_COUNT', integer(1, 10_000), {
    default: '10',
    doc: 'uploaded backups one user may keep at once; one more answers 409 `backup_quota_exceeded`',
  }),
  // Writing a backup reads the node's whole storage: allow minutes, not the gateway's seconds.
  nodeTimeoutMs: variable('BACKUP_NODE_TIMEOUT_MS', integer(1000, 24 * 3600 * 1000), {
    default: '600000',
    note: '(10 min)',
    doc: "how long a node may take to write or read a backup file (RLN's `/backup`, `/restore`)",
  }),
};

export function readBackupsConfig(env: Env, problems: string[]): BackupsConfig {
  return readEnv(BACKUP_VARIABLES, env, problems);
}
