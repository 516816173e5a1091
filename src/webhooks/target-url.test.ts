import { describe, expect, it } from 'vitest';
import { checkWebhookUrl } from './target-url.ts';

const strict = { allowPrivateTargets: false, httpsOnly: false };
const production = { allowPrivateTargets: false, httpsOnly: true };
const laptop = { allowPrivateTargets: true, httpsOnly: false };
const resolvesTo = (...addresses: string[]) => async () => addresses;
const reason = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('checkWebhookUrl', () => {
  it('returns the normalised URL it will call', async () => {
    expect(await checkWebhookUrl('HTTPS://Example.COM/a?b=1', strict, resolvesTo('93.184.215.14'))).toBe('https://example.com/a?b=1');
  });

  it('accepts https only in production', async () => {
    expect(await reason(checkWebhookUrl('http://example.com/', production, resolvesTo('93.184.215.14')))).toMatch(/must use https/);
    expect(await checkWebhookUrl('https://example.com/', production, resolvesTo('93.184.215.14'))).toBe('https://example.com/');
  });

  it('refuses a name when any of its addresses is private', async () => {
    expect(await reason(checkWebhookUrl('https://mixed.example/', strict, resolvesTo('93.184.215.14', '10.0.0.5')))).toMatch(
      /resolves to 10\.0\.0\.5, a private address/,
    );
  });

  it('refuses a name that does not exist, and accepts when the resolver itself fails', async () => {
    const fail = (code: string) => async () => {
      throw Object.assign(new Error(code), { code });
    };
    expect(await reason(checkWebhookUrl('https://nope.example/', strict, fail('ENOTFOUND')))).toMatch(/does not resolve/);
    expect(await checkWebhookUrl('https://later.example/', strict, fail('EAI_AGAIN'))).toBe('https://later.example/');
  });

  it('allows private targets only when the operator does, never other schemes or credentials', async () => {
    expect(await checkWebhookUrl('http://127.0.0.1:3000/hook', laptop)).toBe('http://127.0.0.1:3000/hook');
    expect(await reason(checkWebhookUrl('ftp://127.0.0.1/', laptop))).toMatch(/not ftp:/);
    expect(await reason(checkWebhookUrl('http://a:b@127.0.0.1/', laptop))).toMatch(/credentials/);
    expect(await reason(checkWebhookUrl('http://a@127.0.0.1/', laptop))).toMatch(/credentials/);
  });

  it('answers 400 invalid_request with the problem listed', async () => {
    try {
      await checkWebhookUrl('http://[::1]/', strict);
      expect.unreachable();
    } catch (err: any) {
      expect(err.code).toBe('invalid_request');
      expect(err.status).toBe(400);
      expect(err.details.problems).toEqual([err.message]);
    }
  });
});
