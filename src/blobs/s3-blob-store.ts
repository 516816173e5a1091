// The S3 blob store: archives go to a bucket (AWS or any S3-compatible server) and users download
// them straight from S3 with presigned GET URLs, so large downloads never pass through the service.
// The bucket must exist; the service needs PutObject, GetObject, ListBucket and DeleteObject on it.
import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStoreConfig } from './settings.ts';
import type { Readable } from 'node:stream';
import { assertValidBlobKey, BlobMissingError, type BlobStore, type PresignedUrl } from './blob-store.ts';

type S3Config = Extract<BlobStoreConfig, { kind: 's3' }>;

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;

  constructor(private readonly config: S3Config) {
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.credentials,
      // Checksums only where S3 requires them: newer SDK defaults send streaming trailer checksums
      // that many S3-compatible servers reject, and a part's integrity is already gzip's CRC.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private objectKey = (key: string) => `${this.config.prefix}${key}`;

  async putFile(key: string, sourcePath: string, contentType: string) {
    assertValidBlobKey(key);
    const { size } = await stat(sourcePath);
    // A file stream with its length: one PUT (parts are far below S3's 5 GB limit), never buffered.
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.config.bucket,
        Key: this.objectKey(key),
        Body: createReadStream(sourcePath),
        ContentLength: size,
        ContentType: contentType,
      }),
    );
    await unlink(sourcePath);
  }

  async presignGet(key: string, opts: { expiresInSeconds: number; filename: string }): Promise<PresignedUrl> {
    assertValidBlobKey(key);
    const command = new GetObjectCommand({
      Bucket: this.config.bucket,
      Key: this.objectKey(key),
      ResponseContentDisposition: `attachment; filename="${opts.filename}"`,
    });
    const expiresAt = new Date(Date.now() + opts.expiresInSeconds * 1000);
    return { url: await getSignedUrl(this.client, command, { expiresIn: opts.expiresInSeconds }), expiresAt };
  }

  async open(key: string): Promise<Readable> {
    assertValidBlobKey(key);
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
      return answer.Body as Readable;
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') throw new BlobMissingError(`no object ${key}`);
      throw err;
    }
  }

  async delete(key: string) {
    assertValidBlobKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.objectKey(key) }));
  }

  async deletePrefix(prefix: string) {
    return this.deleteWhere(this.objectKey(prefix), () => true);
  }

  async deleteOlderThan(cutoff: Date) {
    return this.deleteWhere(this.config.prefix, (modified) => modified < cutoff);
  }

  private async deleteWhere(prefix: string, match: (modified: Date) => boolean) {
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.config.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      const keys = (page.Contents ?? []).filter((o) => o.Key && match(o.LastModified ?? new Date(0))).map((o) => ({ Key: o.Key! }));
      if (keys.length > 0) {
        await this.client.send(new DeleteObjectsCommand({ Bucket: this.config.bucket, Delete: { Objects: keys, Quiet: true } }));
        deleted += keys.length;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }
}
