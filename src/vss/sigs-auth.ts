// LDK's "sigs" authorization (vss-server auth-impls, vss-client SigsAuthProvider), what RLN's fork
// and ldk-node send: `Authorization: <66 hex compressed secp256k1 key><128 hex compact ECDSA
// signature><decimal unix seconds>`, the signature over SHA-256(salt || key || time string).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';

/** The reference's 64-byte salt: the phrase padded with dots. */
export const SIGNING_CONSTANT = Buffer.from('VSS Signature Authorizer Signing Salt Constant'.padEnd(64, '.'), 'latin1');

// The reference accepts a time within a day either side of its clock; so do we (a node's clock
// may be off, and a captured header is useless without the store's URL credential).
export const MAX_CLOCK_SKEW_SECONDS = 24 * 3600;

const HEADER = /^([0-9a-fA-F]{66})([0-9a-fA-F]{128})(\d{1,12})$/;

export type SigsCheck = { ok: true; pubkey: string } | { ok: false; reason: 'malformed' | 'stale' | 'bad_signature' };

/** The message a client signs for `pubkey` (33 bytes) at `time` (unix seconds). */
export function sigsMessageHash(pubkey: Uint8Array, time: string): Uint8Array {
  return sha256(Buffer.concat([SIGNING_CONSTANT, pubkey, Buffer.from(time, 'ascii')]));
}

/**
 * Checks headers, remembering each verified header for the rest of its second: a client signs a
 * new header per request, so within a second a busy node sends the same one again, and a
 * verification costs far more (about 1.5 ms) than a lookup.
 */
export class SigsVerifier {
  private second = 0;
  private verified = new Map<string, string>();
  /** Signature verifications done (not answered from memory); for the benchmark and metrics. */
  verifications = 0;

  constructor(private readonly now: () => number = Date.now) {}

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
    const pubkey = Buffer.from(keyHex, 'hex');
    let valid = false;
    try {
      this.verifications++;
      valid = secp256k1.verify(Buffer.from(sigHex, 'hex'), sigsMessageHash(pubkey, time), pubkey, { prehash: false, format: 'compact' });
    } catch {
      valid = false; // not a point on the curve, or a signature out of range
    }
    if (!valid) return { ok: false, reason: 'bad_signature' };
    const normalized = keyHex.toLowerCase();
    this.verified.set(header!, normalized);
    return { ok: true, pubkey: normalized };
  }
}
