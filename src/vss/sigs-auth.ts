// LDK's "sigs" authorization (vss-server auth-impls, vss-client SigsAuthProvider), what RLN's fork
// and ldk-node send: `Authorization: <66 hex compressed secp256k1 key><128 hex compact ECDSA
// signature><decimal unix seconds>`, the signature over SHA-256(salt || key || time string).
// Verified by libsecp256k1, what the reference server and LDK's clients use (the `secp256k1`
// package's prebuilt addon: 0.04 ms a check here, a seventh of OpenSSL's, and every check holds
// the event loop). Where no prebuilt addon loads (a platform it is not built for), by node:crypto
// (OpenSSL) instead, with libsecp256k1's rules applied first; @noble/curves decompresses the key
// for it, which a JWK cannot carry.
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';

/** The reference's 64-byte salt: the phrase padded with dots. */
export const SIGNING_CONSTANT = Buffer.from('VSS Signature Authorizer Signing Salt Constant'.padEnd(64, '.'), 'latin1');

// The reference accepts a time within a day either side of its clock; so do we (a node's clock
// may be off, and a captured header is useless without the store's URL credential).
export const MAX_CLOCK_SKEW_SECONDS = 24 * 3600;

// The group order: libsecp256k1 (what the reference and LDK's clients use) accepts only low-S
// signatures (s <= n/2); OpenSSL accepts both halves, so the high half is refused here first.
const ORDER = secp256k1.Point.CURVE().n;
const HALF_ORDER = ORDER >> 1n;

const HEADER = /^([0-9a-fA-F]{66})([0-9a-fA-F]{128})(\d{1,12})$/;

export type SigsCheck = { ok: true; pubkey: string } | { ok: false; reason: 'malformed' | 'stale' | 'bad_signature' };

/** The message a client signs (its SHA-256) for `pubkey` (33 bytes) at `time` (unix seconds). */
function sigsMessage(pubkey: Uint8Array, time: string): Buffer {
  return Buffer.concat([SIGNING_CONSTANT, pubkey, Buffer.from(time, 'ascii')]);
}

// Making a key object costs about as much as a verification, and a node signs with one key for
// its whole life: keep the latest keys' objects (bounded: the oldest is dropped past the limit).
const KEY_OBJECTS_KEPT = 10_000;
const keyObjects = new Map<string, KeyObject>();

function publicKeyObject(compressed: Uint8Array): KeyObject {
  const hex = Buffer.from(compressed).toString('hex');
  let key = keyObjects.get(hex);
  if (!key) {
    // Throws for bytes that are not a point on the curve.
    const { x, y } = secp256k1.Point.fromBytes(compressed).toAffine();
    const coordinate = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').toString('base64url');
    key = createPublicKey({ key: { kty: 'EC', crv: 'secp256k1', x: coordinate(x), y: coordinate(y) }, format: 'jwk' });
    if (keyObjects.size >= KEY_OBJECTS_KEPT) keyObjects.delete(keyObjects.keys().next().value!);
    keyObjects.set(hex, key);
  }
  return key;
}

/** The `secp256k1` package's native half: 0 verified, 3 not, 1 and 2 an unparsable signature or key. */
interface NativeSecp256k1 {
  ecdsaVerify(signature: Uint8Array, digest: Uint8Array, pubkey: Uint8Array): number;
}

function loadLibsecp256k1(): NativeSecp256k1 | null {
  try {
    // The addon itself, not the package's main module: that falls back to a JavaScript curve
    // (elliptic) several times slower than OpenSSL without saying so.
    const manifest = createRequire(import.meta.url).resolve('secp256k1/package.json');
    // The package's own loader: it picks the prebuilt file for this platform and libc.
    const nodeGypBuild = createRequire(manifest)('node-gyp-build') as (dir: string) => { Secp256k1: new () => NativeSecp256k1 };
    return new (nodeGypBuild(dirname(manifest)).Secp256k1)();
  } catch {
    return null;
  }
}

// Loaded at the first check, not at import (a module's import must not fail or block on an addon).
let libsecp256k1: NativeSecp256k1 | null | undefined;
const native = () => (libsecp256k1 === undefined ? (libsecp256k1 = loadLibsecp256k1()) : libsecp256k1);

export type SignatureBackend = 'libsecp256k1' | 'openssl';
/** Which library checks signatures in this process: libsecp256k1 wherever its addon loads. */
export const signatureBackend = (): SignatureBackend => (native() ? 'libsecp256k1' : 'openssl');

/**
 * Whether `signature` (64 bytes, r || s) is `pubkey`'s (33 bytes, compressed) over the message for
 * `time`, by libsecp256k1's rules: r and s in [1, n-1], s in the low half, the key on the curve.
 */
export function verifySigsSignature(pubkey: Uint8Array, signature: Uint8Array, time: string, backend: SignatureBackend = signatureBackend()): boolean {
  if (signature.length !== 64 || pubkey.length !== 33) return false;
  if (backend === 'libsecp256k1') return verifyWithLibsecp256k1(pubkey, signature, time);
  return verifyWithOpenSsl(pubkey, signature, time);
}

function verifyWithLibsecp256k1(pubkey: Uint8Array, signature: Uint8Array, time: string): boolean {
  const lib = native();
  if (!lib) throw new Error('libsecp256k1 is not loaded in this process');
  // It takes the digest: SHA-256 of the message. Anything but 0 is a refusal (a key off the curve,
  // a signature out of range or high-S).
  return lib.ecdsaVerify(signature, createHash('sha256').update(sigsMessage(pubkey, time)).digest(), pubkey) === 0;
}

function verifyWithOpenSsl(pubkey: Uint8Array, signature: Uint8Array, time: string): boolean {
  const r = BigInt(`0x${Buffer.from(signature.subarray(0, 32)).toString('hex')}`);
  const s = BigInt(`0x${Buffer.from(signature.subarray(32)).toString('hex')}`);
  if (r === 0n || r >= ORDER || s === 0n || s > HALF_ORDER) return false;
  try {
    // node:crypto takes the message and hashes it with SHA-256 itself: the digest signed.
    return verify('sha256', sigsMessage(pubkey, time), { key: publicKeyObject(pubkey), dsaEncoding: 'ieee-p1363' }, signature);
  } catch {
    return false; // not a point on the curve
  }
}

/**
 * Checks headers, remembering each verified header for the rest of its second: a client signs a
 * new header per request, so within a second a busy node sends the same one again, and a
 * verification costs far more (0.3-0.6 ms natively) than a lookup.
 */
export class SigsVerifier {
  private second = 0;
  private verified = new Map<string, string>();
  /** Signature verifications done (not answered from memory); for the benchmark and metrics. */
  verifications = 0;

  constructor(
    private readonly now: () => number = Date.now,
    /** Which library verifies (the benchmark compares them); the fastest one loaded by default. */
    readonly backend: SignatureBackend = signatureBackend(),
  ) {}

  check(header: string | undefined): SigsCheck {
    const m = header ? HEADER.exec(header) : null;
    if (!m) return { ok: false, reason: 'malformed' };
    const [, keyHex, sigHex, time] = m as unknown as [string, string, string, string];
    const nowSeconds = Math.floor(this.now() / 1000);
    if (Math.abs(nowSeconds - Number(time)) > MAX_CLOCK_SKEW_SECONDS) return { ok: false, reason: 'stale' };
    if (nowSeconds !== this.second) {
      this.second = nowSeconds;
      this.verified.clear();
    }
    const known = this.verified.get(header!);
    if (known) return { ok: true, pubkey: known };
    this.verifications++;
    const valid = verifySigsSignature(Buffer.from(keyHex, 'hex'), Buffer.from(sigHex, 'hex'), time, this.backend);
    if (!valid) return { ok: false, reason: 'bad_signature' };
    const normalized = keyHex.toLowerCase();
    this.verified.set(header!, normalized);
    return { ok: true, pubkey: normalized };
  }
}
