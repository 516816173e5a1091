// Signed, expiring download URLs for the local blob store, in the manner of S3's presigned URLs:
// `{PUBLIC_URL}/downloads/<key>?expires=<unix seconds>&signature=<hex HMAC-SHA256>`. The signature
// covers the key and the expiry, so a URL cannot be stretched in time or pointed at another object.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isValidBlobKey } from './blob-store.ts';

export const DOWNLOADS_PATH = '/downloads/';

const sign = (secret: Buffer, key: string, expires: number) =>
  createHmac('sha256', secret).update(`rln-cloud download v1\n${key}\n${expires}`).digest();

export function signDownloadUrl(publicUrl: string, secret: Buffer, key: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  const signature = sign(secret, key, expires).toString('hex');
  return `${publicUrl}${DOWNLOADS_PATH}${key}?expires=${expires}&signature=${signature}`;
}

/**
 * True only for an unexpired URL this service signed for exactly this key. Callers answer every
 * false the same way, so a client learns nothing about why (tampered, expired, other object).
 */
export function verifyDownloadUrl(secret: Buffer, key: string, query: { expires?: unknown; signature?: unknown }, now = new Date()): boolean {
  const { expires, signature } = query;
  if (typeof expires !== 'string' || typeof signature !== 'string') return false;
  if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
  if (!isValidBlobKey(key)) return false;
  const expected = sign(secret, key, Number(expires));
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return false;
  return Number(expires) * 1000 > now.getTime();
}
