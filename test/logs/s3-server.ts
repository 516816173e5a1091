// An S3-compatible server for the S3 blob store tests: s3rver (npm), run in-process on a free
// loopback port with its own directory. It checks presigned URL expiry but, unlike S3, not V4
// signatures; so tampering is tested against the local store, and for S3 is S3's own guarantee.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export const S3_BUCKET = 'rln-log-exports';
// s3rver's built-in account.
const CREDENTIALS = { S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' };

export async function startS3Server() {
  const directory = mkdtempSync(join(tmpdir(), 'rln-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: S3_BUCKET }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    /** The service's environment for this server. */
    env: { BLOB_STORE: 's3', S3_BUCKET, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', S3_PREFIX: 'exports/', ...CREDENTIALS },
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
