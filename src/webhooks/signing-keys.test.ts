// The signer checked with WebCrypto (crypto.subtle, a second implementation independent of the
// node:crypto sign() the keyring uses), plus the file's creation, mode and rotation.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebhookKeyring } from './signing-keys.ts';

async function verifyWithWebCrypto(publicKeyPem: string, header: string, id: string, timestamp: number, body: string) {
  const der = Buffer.from(publicKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const key = await crypto.subtle.importKey('spki', der, { name: 'Ed25519' }, false, ['verify']);
  const data = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const results = [];
  for (const part of header.split(' ')) {
    const [version, sig] = part.split(',');
    results.push(version === 'v1a' && (await crypto.subtle.verify({ name: 'Ed25519' }, key, Buffer.from(sig!, 'base64'), data)));
  }
  return results;
}

describe('WebhookKeyring', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rln-keys-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a 0600 keyring once and signs v1a over id.timestamp.body', async () => {
    const path = join(dir, 'keys.json');
    const ring = new WebhookKeyring(path, 3_600_000);
    ring.ensure();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const first = readFileSync(path, 'utf8');
    new WebhookKeyring(path, 0).ensure(); // a second start keeps the key
    expect(readFileSync(path, 'utf8')).toBe(first);

    const header = await ring.signatureHeader('evt_1', 1700000000, '{"a":1}');
    expect(header).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const pem = ring.currentPublicKeyPem();
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(await verifyWithWebCrypto(pem, header, 'evt_1', 1700000000, '{"a":1}')).toEqual([true]);
    expect(await verifyWithWebCrypto(pem, header, 'evt_1', 1700000001, '{"a":1}')).toEqual([false]);
  });

  it('rotates: both keys sign during the overlap, the new one first', async () => {
    const ring = new WebhookKeyring(join(dir, 'keys.json'), 3_600_000);
    ring.ensure();
    const oldPem = ring.currentPublicKeyPem();
    const result = ring.rotate();
    expect(result.previousRetiresAt).not.toBeNull();
    const header = await ring.signatureHeader('evt_2', 1, 'x');
    expect(await verifyWithWebCrypto(result.publicKey, header, 'evt_2', 1, 'x')).toEqual([true, false]);
    expect(await verifyWithWebCrypto(oldPem, header, 'evt_2', 1, 'x')).toEqual([false, true]);
    expect(ring.rotate(0).previousKeyId).toBeNull();
  });

  it('takes an operator-provided PEM private key, and refuses a key that is not Ed25519', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const path = join(dir, 'given.pem');
    writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const ring = new WebhookKeyring(path, 0);
    ring.ensure();
    expect(ring.signingKeys()).toHaveLength(1);

    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const bad = join(dir, 'ec.pem');
    writeFileSync(bad, ec.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    expect(() => new WebhookKeyring(bad, 0).ensure()).toThrow(/must be Ed25519/);
  });
});
