// Where export archives are stored: local files under DATA_DIR (one machine) or an S3 bucket
// (several replicas, or simply to keep large archives off the service's disk).
import { boolean, matching, oneOf, text, url } from '../env/formats.ts';
import { checkSetTogether, readEnv, variable, type Env } from '../env/variable.ts';

export type BlobStoreConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      region: string;
      /** An S3-compatible endpoint (MinIO, s3rver, ...); unset: AWS. */
      endpoint: string | undefined;
      /** Path-style addressing (http://host/bucket/key), which most S3-compatible servers need. */
      forcePathStyle: boolean;
      /** Static credentials; unset: the AWS SDK's default chain (instance role, AWS_* variables, ...). */
      credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
      /** Prefix of every log export object's key, so one bucket can hold other data too. */
      prefix: string;
      /** Prefix of every backup object's key; never overlapping `prefix` (each area sweeps its own). */
      backupPrefix: string;
      /** Prefix of collected node output (segments, Kubernetes); apart from the other two. */
      nodeLogPrefix: string;
      /** Prefix of VSS values past the database's size (vss/blob-values.ts); no age sweep may touch it. */
      vssPrefix: string;
    };

export const BLOB_STORE_VARIABLES = {
  // Local files need nothing set up, and one machine is what the defaults are for.
  kind: variable('BLOB_STORE', oneOf(['local', 's3']), {
    default: 'local',
    doc: "where log export archives, backups, the nodes' collected output and VSS values past 256 KiB go: `local` (`DATA_DIR/<area>/blobs/`, e.g. `DATA_DIR/vss/blobs/`; downloads served at `PUBLIC_URL/downloads/...`; one machine's) or `s3` (a prefix per area; needed with replicas on several machines)",
  }),
};

/** Read only with BLOB_STORE=s3. */
export const S3_VARIABLES = {
  bucket: variable('S3_BUCKET', matching(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'be a valid bucket name'), {
    unset: 'unset',
    doc: 'the bucket (required with `BLOB_STORE=s3`; it must exist)',
  }),
  region: variable('S3_REGION', text(), { default: 'us-east-1', doc: "the bucket's region" }),
  endpoint: variable('S3_ENDPOINT', url(['http:', 'https:']), {
    unset: 'unset: AWS',
    doc: 'an S3-compatible server, e.g. `http://127.0.0.1:9000` (MinIO)',
  }),
  forcePathStyle: variable('S3_FORCE_PATH_STYLE', boolean(), {
    unset: '`true` with `S3_ENDPOINT`, else `false`',
    doc: '`http://host/bucket/key` addressing, which most S3-compatible servers need',
  }),
  accessKeyId: variable('S3_ACCESS_KEY_ID', text(), {
    unset: "unset: the AWS SDK's default chain",
    doc: 'static credentials, with `S3_SECRET_ACCESS_KEY` (both or neither); otherwise `AWS_*` variables, a profile or an instance role',
    secret: true,
  }),
  secretAccessKey: variable('S3_SECRET_ACCESS_KEY', text(), {
    unset: "unset: the AWS SDK's default chain",
    doc: 'the secret of `S3_ACCESS_KEY_ID`',
    secret: true,
  }),
  // An empty prefix is a choice (a bucket of its own), so it is kept rather than replaced.
  prefix: variable('S3_PREFIX', text(), {
    default: 'log-exports/',
    keepEmpty: true,
    doc: 'prefix of every log export object key, so the bucket can hold other data (set but empty: no prefix)',
  }),
  // Backups live beside exports in the bucket, under their own prefix: export retention (hours)
  // sweeps only its prefix, backup retention (days) only this one.
  backupPrefix: variable('S3_BACKUP_PREFIX', text(), {
    default: 'backups/',
    doc: 'prefix of every backup object key; must not overlap `S3_PREFIX`',
  }),
  // Collected output is kept by size per node, not by age: it needs a prefix no age sweep touches.
  nodeLogPrefix: variable('S3_NODE_LOG_PREFIX', text(), {
    default: 'node-logs/',
    doc: "prefix of the nodes' collected output (segments, on Kubernetes); must not overlap the two above",
  }),
  // Large VSS values are live channel state: only their store's writes and deletes remove them.
  vssPrefix: variable('S3_VSS_PREFIX', text(), {
    default: 'vss/',
    doc: 'prefix of VSS values past 256 KiB (a fixed size, justified in docs/VSS.md; smaller values stay in the database); must not overlap the three above',
  }),
};

export function readBlobStoreConfig(env: Env, problems: string[]): BlobStoreConfig {
  const { kind } = readEnv(BLOB_STORE_VARIABLES, env, problems);
  if (kind !== 's3') return { kind: 'local' };
  const s3 = readEnv(S3_VARIABLES, env, problems);
  // A bad name was reported by readEnv already; this is for a bucket not given at all.
  if (!env.S3_BUCKET?.trim()) problems.push('S3_BUCKET must be set to a valid bucket name when BLOB_STORE=s3');
  checkSetTogether(problems, S3_VARIABLES.accessKeyId, s3.accessKeyId, S3_VARIABLES.secretAccessKey, s3.secretAccessKey);
  checkPrefixesApart(problems, [
    ['S3_PREFIX', withSlash(s3.prefix)],
    ['S3_BACKUP_PREFIX', withSlash(s3.backupPrefix)],
    ['S3_NODE_LOG_PREFIX', withSlash(s3.nodeLogPrefix)],
    ['S3_VSS_PREFIX', withSlash(s3.vssPrefix)],
  ]);
  return {
    kind,
    bucket: s3.bucket ?? '',
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: s3.forcePathStyle ?? s3.endpoint !== undefined,
    credentials: s3.accessKeyId && s3.secretAccessKey ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } : undefined,
    prefix: withSlash(s3.prefix),
    backupPrefix: withSlash(s3.backupPrefix),
    nodeLogPrefix: withSlash(s3.nodeLogPrefix),
    vssPrefix: withSlash(s3.vssPrefix),
  };
}

const withSlash = (prefix: string) => (prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix);

/** Each area's retention deletes by prefix: one area inside another would lose the other's objects. */
function checkPrefixesApart(problems: string[], prefixes: Array<[string, string]>) {
  for (const [i, [name, prefix]] of prefixes.entries()) {
    for (const [otherName, other] of prefixes.slice(i + 1)) {
      if (prefix.startsWith(other) || other.startsWith(prefix)) {
        problems.push(
          `${name} (${JSON.stringify(prefix)}) and ${otherName} (${JSON.stringify(other)}) must not overlap: ` +
            "one area's retention would delete the other's objects; give each its own prefix",
        );
      }
    }
  }
}
