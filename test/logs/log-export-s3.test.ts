// Log exports with the S3 blob store, against an S3-compatible server (s3rver): archives are
// uploaded to the bucket, downloaded straight from S3 with presigned URLs that expire, and
// deleted by retention.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { ExportJanitor } from '../../src/logs/export-janitor.ts';
import { createLogger } from '../../src/logger.ts';
import { downloadParts, waitForExport, writeSyntheticLog } from './export-helpers.ts';
import { S3_BUCKET, startS3Server } from './s3-server.ts';

const URL_TTL_SECONDS = 3;

describe(`log export, S3 blob store (s3rver), on ${databaseLabel()}`, () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let client: S3Client;
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  let taskId: string;

  const objects = async () =>
    ((await client.send(new ListObjectsV2Command({ Bucket: S3_BUCKET }))).Contents ?? []).map((o) => o.Key!).sort();

  beforeAll(async () => {
    s3 = await startS3Server();
    client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: s3.env.S3_ACCESS_KEY_ID, secretAccessKey: s3.env.S3_SECRET_ACCESS_KEY },
    });
    t = await startTestServer({ ...s3.env, LOG_EXPORT_PART_BYTES: String(16 * 1024), LOG_EXPORT_URL_TTL_SECONDS: String(URL_TTL_SECONDS) });
    alice = await t.createUser('scale');
    nodeId = (await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 's3-logs', network: 'regtest' } })).json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING');
  });
  afterAll(async () => {
    await t?.stop();
    client?.destroy();
    await s3?.stop();
  });

  it('uploads the parts to the bucket and answers presigned S3 URLs that download them', async () => {
    const synthetic = writeSyntheticLog(join(t.config.dataDir, 'nodes', nodeId), 1, new Date(Date.now() - 3600_000), 10_000);
    const start = await t.call(`/api/nodes/${nodeId}/logs`, { method: 'POST', token: alice.token });
    taskId = start.json.taskId;
    const done = await waitForExport(t.call, alice.token, nodeId, taskId);
    expect(done.status).toBe(200);
    expect(done.json.status).toBe('SUCCEEDED');
    const urls: string[] = done.json.data;
    expect(urls.length).toBeGreaterThan(1);
    for (const u of urls) {
      expect(u.startsWith(`${s3.endpoint}/${S3_BUCKET}/exports/${nodeId}/${taskId}/part-`)).toBe(true);
      expect(new URL(u).searchParams.get('X-Amz-Expires')).toBe(String(URL_TTL_SECONDS));
      expect(new URL(u).searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(await objects()).toEqual(urls.map((_, i) => `exports/${nodeId}/${taskId}/part-${String(i + 1).padStart(4, '0')}.log.gz`));

    const whole = (await downloadParts(urls)).join('');
    expect(whole).toContain('# build #1 create devnode-0.1.0 SUCCESS');
    expect(whole).toContain(synthetic);
    expect(whole).toContain('INFO devnode devnode-0.1.0 started');
    // Downloads come from S3, not through the service: it has no /downloads route with s3.
    expect((await t.call('/downloads/anything')).status).toBe(404);
  });

  it('URLs expire after LOG_EXPORT_URL_TTL_SECONDS; asking again gives working ones', async () => {
    const [url] = (await t.call(`/api/nodes/${nodeId}/logs?taskId=${taskId}`, { token: alice.token })).json.data;
    expect((await fetch(url)).status).toBe(200);
    await new Promise((r) => setTimeout(r, (URL_TTL_SECONDS + 1.5) * 1000));
    expect((await fetch(url)).status).toBe(403);
    const fresh = await t.call(`/api/nodes/${nodeId}/logs?taskId=${taskId}`, { token: alice.token });
    expect((await fetch(fresh.json.data[0])).status).toBe(200);
  });

  it('retention deletes the objects and the task', async () => {
    const janitor = new ExportJanitor({ db: t.server.db, blobs: t.server.services.logExports.blobs, config: t.config, log: createLogger('silent') });
    const result = await janitor.sweep(new Date(Date.now() + 25 * 3600_000));
    expect(result.expired).toBe(1);
    expect(await objects()).toEqual([]);
    expect((await t.call(`/api/nodes/${nodeId}/logs?taskId=${taskId}`, { token: alice.token })).status).toBe(404);
  });
});
