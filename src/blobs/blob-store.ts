// Where finished export archives are kept and how users download them. One interface, chosen once
// at start-up from BLOB_STORE: `local` (files under DATA_DIR, served by this service through
// signed expiring URLs) or `s3` (a bucket, downloaded straight from S3 through presigned URLs).
import type { ReadStream } from 'node:fs';
import type { Readable } from 'node:stream';

/** The separate stores the service keeps: log export archives, node backups, collected node output (Kubernetes), large VSS values. */
export type BlobArea = 'exports' | 'backups' | 'node-logs' | 'vss';

export interface PresignedUrl {
  url: string;
  expiresAt: Date;
}

export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** Stores the file at `sourcePath` under `key`; the source file may be moved away. */
  putFile(key: string, sourcePath: string, contentType: string): Promise<void>;
  /** A URL anyone holding it can GET the object with until it expires; `filename` names the download. */
  presignGet(key: string, opts: { expiresInSeconds: number; filename: string }): Promise<PresignedUrl>;
  /** The object's bytes, streamed; rejects with BlobMissingError when there is none. */
  open(key: string): Promise<Readable>;
  /** Deletes one object; nothing happens when there is none. */
  delete(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix`; returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** Deletes objects last written before `cutoff` (retention, and objects whose record is gone). */
  deleteOlderThan(cutoff: Date): Promise<number>;
  /**
   * The object behind one of this store's download URLs, for a store whose URLs point at this
   * service (local); absent where they point elsewhere (S3 serves its own presigned URLs).
   */
  openSigned?: OpenSigned;
  /** With openSigned: what this store's URL paths start with after /downloads/. */
  urlPrefix?: string;
}

export interface OpenedBlob {
  stream: ReadStream;
  bytes: number;
}

/** The object behind a download URL; 'forbidden' when the URL is not valid for it right now. */
export type OpenSigned = (key: string, query: { expires?: unknown; signature?: unknown }) => Promise<OpenedBlob | 'forbidden' | 'missing'>;

// Keys are made by the service, but the local store turns them into paths and URLs: allow only
// plain segments so no key can climb out of its directory or need URL escaping.
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$/;
export const isValidBlobKey = (key: string) => KEY.test(key) && !key.split('/').some((s) => s.includes('..'));

export function assertValidBlobKey(key: string) {
  if (!isValidBlobKey(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
}

/** An object that is not in the store (deleted by retention, or never written). */
export class BlobMissingError extends Error {}
