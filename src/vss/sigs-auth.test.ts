// The sigs check against vectors it did not compute: signatures made by @noble/curves' signer
// (RFC 6979, low-S as libsecp256k1 and LDK's clients) and by node:crypto through the test
// client, each message hashed here with SHA-256 from the protocol's description; and the check
// agrees with @noble/curves' own verification (what it replaced) on good, high-S and malformed
// signatures and keys. Both backends are held to the same vectors: libsecp256k1 (the prebuilt addon)
// and OpenSSL (where no addon loads).
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { signatureBackend, SigsVerifier, verifySigsSignature as verifyWith, type SignatureBackend } from './sigs-auth.ts';
import { newVssKey } from '../../test/helpers/vss-client.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const SALT = Buffer.from('VSS Signature Authorizer Signing Salt Constant..................', 'latin1');
const digest = (pubkey: Uint8Array, time: string) => createHash('sha256').update(Buffer.concat([SALT, pubkey, Buffer.from(time)])).digest();
const hex32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
const nobleVerifies = (sig: Uint8Array, pubkey: Uint8Array, time: string) => {
  try {
    return secp256k1.verify(sig, digest(pubkey, time), pubkey, { prehash: false, format: 'compact' });
  } catch {
    return false;
  }
};

function signed(time = '1700000000') {
  const secret = secp256k1.utils.randomSecretKey();
  const pubkey = secp256k1.getPublicKey(secret, true);
  const sig = Buffer.from(secp256k1.sign(digest(pubkey, time), secret, { prehash: false, format: 'compact' }));
  return { secret, pubkey, sig, time, r: BigInt(`0x${sig.subarray(0, 32).toString('hex')}`), s: BigInt(`0x${sig.subarray(32).toString('hex')}`) };
}

it('checks signatures with libsecp256k1 where its prebuilt addon exists (Linux x64, as CI and the image)', () => {
  if (process.platform === 'linux' && process.arch === 'x64') expect(signatureBackend()).toBe('libsecp256k1');
});

describe.each<SignatureBackend>(['libsecp256k1', 'openssl'])('verifySigsSignature with %s', (backend) => {
  const verifySigsSignature = (pubkey: Uint8Array, signature: Uint8Array, time: string) => verifyWith(pubkey, signature, time, backend);

  it('accepts signatures made by an independent signer, as @noble/curves does', () => {
    for (let i = 0; i < 40; i++) {
      const { pubkey, sig, time } = signed(String(1700000000 + i));
      expect(verifySigsSignature(pubkey, sig, time)).toBe(true);
      expect(nobleVerifies(sig, pubkey, time)).toBe(true);
    }
    // node:crypto's signer, made low-S by the test client, through the whole header.
    const key = newVssKey();
    expect(new SigsVerifier().check(key.token())).toMatchObject({ ok: true, pubkey: key.publicKey.toString('hex') });
  });

  it('refuses the high-S twin of a valid signature, which OpenSSL alone would accept', () => {
    const { pubkey, r, s, time } = signed();
    const high = Buffer.concat([hex32(r), hex32(N - s)]);
    expect(verifySigsSignature(pubkey, high, time)).toBe(false);
    expect(nobleVerifies(high, pubkey, time)).toBe(false);
    const now = Math.floor(Date.now() / 1000);
    const v = signed(String(now));
    const header = `${Buffer.from(v.pubkey).toString('hex')}${hex32(v.r).toString('hex')}${hex32(N - v.s).toString('hex')}${now}`;
    expect(new SigsVerifier().check(header)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses malformed signatures and keys, as @noble/curves does', () => {
    const { pubkey, sig, r, s, time } = signed();
    const other = signed();
    // x = 5 has no point on secp256k1 (5^3 + 7 = 132 is not a square mod p).
    const offCurve = Buffer.concat([Buffer.from([0x02]), hex32(5n)]);
    const cases: Array<[string, Uint8Array, Uint8Array, string]> = [
      ['r = 0', pubkey, Buffer.concat([hex32(0n), hex32(s)]), time],
      ['s = 0', pubkey, Buffer.concat([hex32(r), hex32(0n)]), time],
      ['r = n', pubkey, Buffer.concat([hex32(N), hex32(s)]), time],
      ['s = n', pubkey, Buffer.concat([hex32(r), hex32(N)]), time],
      ['all ones', pubkey, Buffer.alloc(64, 0xff), time],
      ['random bytes', pubkey, randomBytes(64), time],
      ['another time', pubkey, sig, String(Number(time) + 1)],
      ["another key's signature", pubkey, other.sig, other.time],
      ['a key off the curve', offCurve, sig, time],
      ['a key with prefix 04', Buffer.concat([Buffer.from([0x04]), Buffer.from(pubkey).subarray(1)]), sig, time],
      ['a flipped signature bit', pubkey, Buffer.from(sig.map((b, i) => (i === 40 ? b ^ 1 : b))), time],
    ];
    for (const [what, key, signature, t] of cases) {
      expect(verifySigsSignature(key, signature, t), what).toBe(false);
      expect(nobleVerifies(signature, key, t), what).toBe(false);
    }
    expect(verifySigsSignature(pubkey, sig.subarray(0, 63), time)).toBe(false);
  });
});
