// Backups with the S3 blob store (s3rver, an S3-compatible server run here): the file goes to the
// bucket under S3_BACKUP_PREFIX, downloads through S3's presigned URL, uploads and deletion reach
// the bucket, and log export retention, which sweeps its own prefix, leaves backups alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { startS3Server, S3_BUCKET } from '../logs/s3-server.ts';
import { ExportJanitor } from '../../src/logs/export-janitor.ts';
import { createLogger } from '../../src/logger.ts';
import { backUp, download, initWallet, sha256, unlock } from './backup-helpers.ts';

describe(`backups, S3 blob store, on ${databaseLabel()}`, () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  let client: S3Client;

  const keys = async (prefix: string) =>
    ((await client.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key);

  beforeAll(async () => {
    s3 = await startS3Server();
    client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    t = await startTestServer({ ...s3.env, S3_BACKUP_PREFIX: 'node-backups' });
    ({ alice } = await createTenants(t));
    [nodeId] = await createNodes(t, alice, [{ name: 's3-backups' }]);
    await initWallet(t, alice, nodeId);
    await unlock(t, alice, nodeId);
  });
  afterAll(async () => {
    await t?.stop();
    await s3?.stop();
  });

  it('stores the backup in the bucket under its own prefix and downloads it from S3', async () => {
    const done = await backUp(t, alice, nodeId);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.downloadUrl).toMatch(`${s3.endpoint}/${S3_BUCKET}/node-backups/${nodeId}/${done.backupId}.rlnbackup?`);
    const bytes = await download(done.downloadUrl);
    expect(sha256(bytes)).toBe(done.sha256);
    expect(await keys('node-backups/')).toEqual([`node-backups/${nodeId}/${done.backupId}.rlnbackup`]);

    // Log export retention sweeps everything under its prefix older than its cutoff: not backups.
    const exportJanitor = new ExportJanitor({
      db: t.server.db,
      blobs: t.server.services.blobs,
      config: t.config,
      log: createLogger('silent'),
    });
    await exportJanitor.sweep(new Date(Date.now() + 365 * 24 * 3600_000));
    expect(await keys('node-backups/')).toHaveLength(1);

    const r = await t.call(`/api/nodes/${nodeId}/backups/${done.backupId}`, { method: 'DELETE', token: alice.token });
    expect(r.status).toBe(204);
    expect(await keys('node-backups/')).toEqual([]);
  });

  it('stores an upload in the bucket', async () => {
    const res = await fetch(`${t.base}/api/backups/uploads?network=regtest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(Buffer.from('an encrypted backup, as far as the service can tell')),
    });
    expect(res.status).toBe(201);
    const { backupId } = (await res.json()) as { backupId: string };
    expect(await keys('node-backups/uploads/')).toEqual([`node-backups/uploads/${backupId}.rlnbackup`]);
  });

  it('refuses S3_PREFIX and S3_BACKUP_PREFIX that overlap', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    expect(() => loadConfig({ ...s3.env, S3_PREFIX: 'data/', S3_BACKUP_PREFIX: 'data/backups/' })).toThrow(/must not overlap/);
  });
});
