// devnode's VSS identity and "sigs" tokens (LDK's vss-client SigsAuthProvider, what RLN's fork
// sends; the service verifies them in src/vss/sigs-auth.ts). RLN's fork derives the key from the
// mnemonic at m/535'/1'; devnode's mnemonic is a stand-in, not BIP39 (mnemonic.ts), so the key is
// a hash of it instead: the same mnemonic gives the same key, hence the same store, on any copy.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';

/** The reference's 64-byte salt: the phrase padded with dots. */
const SIGNING_SALT = Buffer.from('VSS Signature Authorizer Signing Salt Constant'.padEnd(64, '.'), 'latin1');
const ORDER = secp256k1.Point.CURVE().n;

export interface VssIdentity {
  /** 33-byte compressed public key in hex: the `sigs` identity and the store id. */
  pubkey: string;
  /** The Authorization header for `time` (unix seconds). */
  token(time?: number): string;
  /** Values are sealed before they leave the node, as RLN's fork encrypts them. */
  seal(plain: Buffer): Buffer;
  open(sealed: Buffer): Buffer;
}

export function vssIdentityFromMnemonic(mnemonic: string): VssIdentity {
  const digest = (purpose: string) => createHash('sha256').update(`devnode/${purpose}\n${mnemonic}`).digest();
  // A digest is a valid secret key unless it is 0 or >= n (odds of about 2^-128); reduce it anyway.
  const secret = (BigInt(`0x${digest('vss-key').toString('hex')}`) % (ORDER - 1n)) + 1n;
  const secretKey = Buffer.from(secret.toString(16).padStart(64, '0'), 'hex');
  const publicKey = Buffer.from(secp256k1.getPublicKey(secretKey, true));
  const encryptionKey = digest('vss-encryption');
  return {
    pubkey: publicKey.toString('hex'),
    token(time = Math.floor(Date.now() / 1000)) {
      const message = Buffer.concat([SIGNING_SALT, publicKey, Buffer.from(String(time), 'ascii')]);
      // noble hashes the message with SHA-256 (prehash) and makes low-S compact signatures, as libsecp256k1 wants.
      const signature = Buffer.from(secp256k1.sign(message, secretKey, { prehash: true, lowS: true }));
      return `${publicKey.toString('hex')}${signature.toString('hex')}${time}`;
    },
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    open(sealed) {
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]);
    },
  };
}
