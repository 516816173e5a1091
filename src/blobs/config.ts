// Where export archives are stored: local files under DATA_DIR (one machine) or an S3 bucket
// (several replicas, or simply to keep large archives off the service's disk).

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
      /** Prefix of every object key, so one bucket can hold other data too. */
      prefix: string;
    };

type Env = Record<string, string | undefined>;

export function readBlobStoreConfig(env: Env, problems: string[]): BlobStoreConfig {
  const kind = env.BLOB_STORE || 'local';
  if (kind === 'local') return { kind };
  if (kind !== 's3') {
    problems.push(`BLOB_STORE must be "local" or "s3", got "${kind}"`);
    return { kind: 'local' };
  }
  const bucket = env.S3_BUCKET ?? '';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) problems.push('S3_BUCKET must be set to a valid bucket name when BLOB_STORE=s3');
  const endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint) {
    try {
      if (!['http:', 'https:'].includes(new URL(endpoint).protocol)) throw new Error();
    } catch {
      problems.push(`S3_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
    }
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY || undefined;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  const pathStyle = (env.S3_FORCE_PATH_STYLE || (endpoint ? 'true' : 'false')).toLowerCase();
  if (!['true', 'false', '1', '0'].includes(pathStyle)) problems.push(`S3_FORCE_PATH_STYLE must be true or false, got "${pathStyle}"`);
  let prefix = env.S3_PREFIX ?? 'log-exports/';
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  return {
    kind,
    bucket,
    region: env.S3_REGION || 'us-east-1',
    endpoint,
    forcePathStyle: pathStyle === 'true' || pathStyle === '1',
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    prefix,
  };
}
