// GET /downloads/<key>?expires=&signature=: serves an object of a local blob store to whoever
// holds a URL the service signed (no bearer token: the URL is the credential, like S3's presigned
// URLs). Registered only with BLOB_STORE=local; with s3 the URLs point at S3 itself. Log export
// archives and backups are separate stores; a URL names its store by its first path segment.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import type { OpenSigned } from '../../blobs/blob-store.ts';
import { DOWNLOADS_PATH } from '../../blobs/signed-url.ts';

export interface SignedDownloads {
  openSigned: OpenSigned;
  /** What this store's URL paths start with after /downloads/ ('' for the exports store). */
  urlPrefix: string;
  contentType: string;
}

export function getDownloadRoute(app: FastifyInstance, stores: SignedDownloads[]) {
  // Longest prefix first, so 'backups/...' is never taken for the exports store ('').
  const byPrefix = [...stores].sort((a, b) => b.urlPrefix.length - a.urlPrefix.length);
  app.get<{ Params: { '*': string }; Querystring: Record<string, unknown> }>(
    `${DOWNLOADS_PATH}*`,
    { schema: { hide: true } },
    async (request, reply) => {
      const key = request.params['*'];
      const store = byPrefix.find((s) => key.startsWith(s.urlPrefix))!;
      const blob = store ? await store.openSigned(key, request.query) : 'forbidden';
      // One answer for every bad URL (tampered, expired, signed for another object, made up), so
      // a caller learns nothing about which objects exist.
      if (blob === 'forbidden') throw new AppError('forbidden', 'this download link is invalid or has expired');
      if (blob === 'missing') throw new AppError('not_found', 'this download is no longer available');
      const filename = key.replaceAll('/', '-');
      return reply
        .header('content-type', store.contentType)
        .header('content-length', blob.bytes)
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'private, no-store')
        .send(blob.stream);
    },
  );
}
