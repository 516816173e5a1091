import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signDownloadUrl, verifyDownloadUrl } from './signed-url.ts';

const secret = randomBytes(32);
const key = 'aaaa/bbbb/part-0001.log.gz';
const parse = (url: string) => {
  const u = new URL(url);
  return { key: decodeURIComponent(u.pathname.replace(/^\/downloads\//, '')), query: Object.fromEntries(u.searchParams) };
};

describe('signed download URLs', () => {
  const url = signDownloadUrl('https://cloud.example', secret, key, new Date(Date.now() + 60_000));

  it('verify for their key until they expire', () => {
    const { key: k, query } = parse(url);
    expect(url.startsWith('https://cloud.example/downloads/aaaa/bbbb/part-0001.log.gz?expires=')).toBe(true);
    expect(verifyDownloadUrl(secret, k, query)).toBe(true);
    expect(verifyDownloadUrl(secret, k, query, new Date(Date.now() + 61_000))).toBe(false);
  });

  it('fail when tampered, moved to another object, re-timed, or signed with another secret', () => {
    const { key: k, query } = parse(url);
    const flipped = query.signature!.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(verifyDownloadUrl(secret, k, { ...query, signature: flipped })).toBe(false);
    expect(verifyDownloadUrl(secret, 'aaaa/bbbb/part-0002.log.gz', query)).toBe(false);
    expect(verifyDownloadUrl(secret, k, { ...query, expires: String(Number(query.expires) + 3600) })).toBe(false);
    expect(verifyDownloadUrl(randomBytes(32), k, query)).toBe(false);
    expect(verifyDownloadUrl(secret, k, { expires: query.expires })).toBe(false);
    expect(verifyDownloadUrl(secret, '../etc/passwd', query)).toBe(false);
    expect(verifyDownloadUrl(secret, k, { ...query, signature: 'zz' })).toBe(false);
  });
});
