// The signer checked with WebCrypto (crypto.subtle, a second implementation independent of the
// node:crypto sign() the keyring uses), plus the file's creation, mode and rotation.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebhookKeyring } from './signing-keys.ts';

/** The original service's check: RSA-SHA256, PKCS#1 v1.5, over the body, here with WebCrypto. */
async function verifyRsaWithWebCrypto(publicKeyPem: string, signatureBase64: string, body: string) {
  const der = Buffer.from(publicKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const key = await crypto.subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'RSASSA-PKCS1-v1_5' }, key, Buffer.from(signatureBase64, 'base64'), new TextEncoder().encode(body));
}

const rsaVerifies = (publicKeyPem: string, signatureBase64: string, body: string) =>
  verify('sha256', Buffer.from(body), publicKeyPem, Buffer.from(signatureBase64, 'base64'));

/** A keyring file of the previous release: Ed25519 keys only. */
function writeOldKeyring(path: string) {
  const { privateKey } = generateKeyPairSync('ed25519');
  const ring = {
    version: 1,
    keys: [{ id: 'whk_old', privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), createdAt: '2026-01-01T00:00:00.000Z', retiresAt: null }],
  };
  writeFileSync(path, `${JSON.stringify(ring, null, 2)}\n`, { mode: 0o600 });
  return ring;
}

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

  it('adds an RSA key to a keyring of the previous release, keeping its Ed25519 keys as they were', async () => {
    const path = join(dir, 'keys.json');
    const old = writeOldKeyring(path);
    const ring = new WebhookKeyring(path, 3_600_000);
    expect(ring.ensure()).toEqual([]);
    const file = JSON.parse(readFileSync(path, 'utf8'));
    // A replica of the previous release reads `version` and `keys` alone: both unchanged.
    expect(file.version).toBe(1);
    expect(file.keys).toEqual(old.keys);
    expect(file.rsaKeys).toHaveLength(1);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const body = '{"eventType":"TEST","nodeId":"n"}';
    const headers = await ring.signedHeaders('evt_1', 1700000000, body);
    expect(Object.keys(headers).sort()).toEqual(['X-ThunderStack-Signature', 'webhook-signature']);
    const pem = ring.thunderStackPublicKeyPem()!;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(rsaVerifies(pem, headers['X-ThunderStack-Signature']!, body)).toBe(true);
    expect(await verifyRsaWithWebCrypto(pem, headers['X-ThunderStack-Signature']!, body)).toBe(true);
    expect(await verifyRsaWithWebCrypto(pem, headers['X-ThunderStack-Signature']!, `${body} `)).toBe(false);
    expect(await verifyWithWebCrypto(ring.currentPublicKeyPem(), headers['webhook-signature']!, 'evt_1', 1700000000, body)).toEqual([true]);

    // A second start keeps the key it added.
    const again = readFileSync(path, 'utf8');
    new WebhookKeyring(path, 0).ensure();
    expect(readFileSync(path, 'utf8')).toBe(again);
  });

  it('adds one RSA key when several replicas start together on an old keyring', async () => {
    const path = join(dir, 'keys.json');
    writeOldKeyring(path);
    const script = `import { WebhookKeyring } from ${JSON.stringify(new URL('./signing-keys.ts', import.meta.url).pathname)};
      const ring = new WebhookKeyring(process.argv[1], 0); ring.ensure();
      process.stdout.write(ring.thunderStackPublicKeyPem());`;
    const replica = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c));
        child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`replica exited ${code}`))));
      });
    const keys = await Promise.all([replica(), replica(), replica()]);
    expect(new Set(keys).size).toBe(1);
    expect(JSON.parse(readFileSync(path, 'utf8')).rsaKeys).toHaveLength(1);
    // The key every replica signs with is the one in the file.
    expect(new WebhookKeyring(path, 0).thunderStackPublicKeyPem()).toBe(keys[0]);
  }, 60_000);

  it('rotates RSA with an overlap: the new key is published at once, the old one signs until the overlap ends', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = new Date('2026-03-01T12:00:00Z');
      vi.setSystemTime(start);
      const ring = new WebhookKeyring(join(dir, 'keys.json'), 3_600_000);
      ring.ensure();
      const oldPem = ring.thunderStackPublicKeyPem()!;
      const rotated = ring.rotate();
      const newPem = rotated.thunderStack!.publicKey;
      expect(rotated.thunderStack).toMatchObject({ signsFrom: '2026-03-01T13:00:00.000Z', previousRetiresAt: '2026-03-01T14:00:00.000Z' });
      const body = '{"a":1}';
      const rsaKeys = () => ring.publishedKeys().filter((k) => k.scheme === 'thunderstack-rsa-sha256');

      // During the overlap: the old key signs and is current; the new one is listed, with its start.
      expect(ring.thunderStackPublicKeyPem()).toBe(oldPem);
      let sig = (await ring.signedHeaders('e', 1, body))['X-ThunderStack-Signature']!;
      expect([rsaVerifies(oldPem, sig, body), rsaVerifies(newPem, sig, body)]).toEqual([true, false]);
      expect(rsaKeys().map((k) => [k.publicKey, k.current, k.signsFrom, k.signsUntil])).toEqual([
        [oldPem, true, expect.any(String), '2026-03-01T13:00:00.000Z'],
        [newPem, false, '2026-03-01T13:00:00.000Z', null],
      ]);

      // The overlap over: the new key signs; the old one stays listed for as long again.
      vi.setSystemTime(new Date('2026-03-01T13:00:01Z'));
      expect(ring.thunderStackPublicKeyPem()).toBe(newPem);
      sig = (await ring.signedHeaders('e', 1, body))['X-ThunderStack-Signature']!;
      expect([rsaVerifies(oldPem, sig, body), rsaVerifies(newPem, sig, body)]).toEqual([false, true]);
      expect(rsaKeys().map((k) => [k.publicKey, k.current])).toEqual([[newPem, true], [oldPem, false]]);

      vi.setSystemTime(new Date('2026-03-01T14:00:01Z'));
      expect(rsaKeys().map((k) => k.publicKey)).toEqual([newPem]);

      // An overlap of 0 (a leaked key) switches at once, and drops the key it replaces.
      const leaked = ring.rotate(0);
      expect(ring.thunderStackPublicKeyPem()).toBe(leaked.thunderStack!.publicKey);
      expect(rsaKeys().map((k) => k.publicKey)).toEqual([leaked.thunderStack!.publicKey]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rotating again within the overlap: each key signs in turn, every signer listed while it signs', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date('2026-03-01T12:00:00Z'));
      const ring = new WebhookKeyring(join(dir, 'keys.json'), 3_600_000);
      ring.ensure();
      const k1 = ring.thunderStackPublicKeyPem()!;
      const k2 = ring.rotate().thunderStack!.publicKey;
      vi.setSystemTime(new Date('2026-03-01T12:30:00Z'));
      const k3 = ring.rotate().thunderStack!.publicKey;
      const at = (iso: string) => {
        vi.setSystemTime(new Date(iso));
        const listed = ring.publishedKeys().filter((k) => k.scheme === 'thunderstack-rsa-sha256').map((k) => k.publicKey);
        const signer = ring.thunderStackPublicKeyPem()!;
        expect(listed).toContain(signer);
        return signer;
      };
      expect(at('2026-03-01T12:45:00Z')).toBe(k1);
      expect(at('2026-03-01T13:15:00Z')).toBe(k2);
      expect(at('2026-03-01T13:45:00Z')).toBe(k3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('loads bare PEM keys: Ed25519 alone (RSA then added), or Ed25519 and RSA together', async () => {
    const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const both = join(dir, 'both.pem');
    writeFileSync(both, `${ed}${rsa}`, { mode: 0o600 });
    const ring = new WebhookKeyring(both, 0);
    expect(ring.ensure()).toEqual([]);
    expect(readFileSync(both, 'utf8')).toBe(`${ed}${rsa}`); // nothing lacked, nothing written
    const body = '{}';
    const headers = await ring.signedHeaders('e', 1, body);
    expect(rsaVerifies(ring.thunderStackPublicKeyPem()!, headers['X-ThunderStack-Signature']!, body)).toBe(true);

    const edOnly = join(dir, 'ed.pem');
    writeFileSync(edOnly, ed, { mode: 0o600 });
    const ring2 = new WebhookKeyring(edOnly, 0);
    ring2.ensure();
    expect(ring2.currentPublicKeyPem()).toBe(ring.currentPublicKeyPem()); // the operator's Ed25519 key kept
    expect(ring2.thunderStackPublicKeyPem()).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  });

  it('turns a scheme off: no key added for it, no header, not listed', async () => {
    const path = join(dir, 'keys.json');
    writeOldKeyring(path);
    const v1aOnly = new WebhookKeyring(path, 0, ['standard-webhooks-v1a']);
    v1aOnly.ensure();
    expect(JSON.parse(readFileSync(path, 'utf8')).rsaKeys).toBeUndefined();
    expect(Object.keys(await v1aOnly.signedHeaders('e', 1, '{}'))).toEqual(['webhook-signature']);
    expect(v1aOnly.publishedKeys().map((k) => k.scheme)).toEqual(['standard-webhooks-v1a']);
    expect(v1aOnly.thunderStackPublicKeyPem()).toBeUndefined();

    const rsaOnly = new WebhookKeyring(path, 0, ['thunderstack-rsa-sha256']);
    rsaOnly.ensure();
    expect(Object.keys(await rsaOnly.signedHeaders('e', 1, '{}'))).toEqual(['X-ThunderStack-Signature']);
    expect(rsaOnly.publishedKeys().map((k) => [k.scheme, k.header, k.current])).toEqual([['thunderstack-rsa-sha256', 'X-ThunderStack-Signature', true]]);
  });
});
