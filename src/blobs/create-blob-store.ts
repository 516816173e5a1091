// Chooses the blob store once at start-up from the configuration.
import type { BlobArea, BlobStore } from './blob-store.ts';
import type { BlobStoreConfig } from './settings.ts';
import { LocalBlobStore } from './local-blob-store.ts';

/** The store of one area: log exports (the default), backups or collected node output, each with its own files or key prefix. */
export function createBlobStore(config: { blobStore: BlobStoreConfig; dataDir: string; publicUrl: string }, area: BlobArea = 'exports'): BlobStore {
  if (config.blobStore.kind === 'local') return new LocalBlobStore({ dataDir: config.dataDir, publicUrl: config.publicUrl, area });
  const s3 = config.blobStore;
  const prefix = { exports: s3.prefix, backups: s3.backupPrefix, 'node-logs': s3.nodeLogPrefix, vss: s3.vssPrefix }[area];
  return lazyS3BlobStore({ ...s3, prefix });
}

/**
 * The S3 store, with the AWS SDK loaded on first use rather than at start-up: the SDK is large,
 * start-up time is measured, and a service that never exports never needs it.
 */
function lazyS3BlobStore(config: Extract<BlobStoreConfig, { kind: 's3' }>): BlobStore {
  let store: Promise<BlobStore> | undefined;
  const get = () => (store ??= import('./s3-blob-store.ts').then(({ S3BlobStore }) => new S3BlobStore(config)));
  return {
    kind: 's3',
    putFile: async (...args) => (await get()).putFile(...args),
    presignGet: async (...args) => (await get()).presignGet(...args),
    open: async (...args) => (await get()).open(...args),
    delete: async (...args) => (await get()).delete(...args),
    deletePrefix: async (...args) => (await get()).deletePrefix(...args),
    deleteOlderThan: async (...args) => (await get()).deleteOlderThan(...args),
  };
}
