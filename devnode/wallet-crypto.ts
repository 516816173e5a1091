// How devnode protects its wallet file. One scrypt derivation of the password gives 64 bytes: the
// first half is stored as the password hash (to tell a wrong password), the second half is the
// AES-256-GCM key of the mnemonic and is never stored. The password itself is never written.
import { createCipheriv, createDecipheriv, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** What the state file keeps for one password: salt, hash and the mnemonic it encrypts. */
export interface SealedMnemonic {
  passwordSalt: string;
  passwordHash: string;
  mnemonic: { iv: string; tag: string; ciphertext: string };
}

// scrypt's default cost (N=16384) takes tens of milliseconds: slow enough to be a real KDF, fast
// enough that tests which init and unlock many times stay quick.
const derive = (password: string, salt: Buffer) =>
  new Promise<{ hash: Buffer; key: Buffer }>((resolve, reject) => {
    scrypt(password, salt, 64, (err, out) => (err ? reject(err) : resolve({ hash: out.subarray(0, 32), key: out.subarray(32) })));
  });

export async function sealMnemonic(password: string, mnemonic: string): Promise<SealedMnemonic> {
  const salt = randomBytes(16);
  const { hash, key } = await derive(password, salt);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(mnemonic, 'utf8'), cipher.final()]);
  return {
    passwordSalt: salt.toString('hex'),
    passwordHash: hash.toString('hex'),
    mnemonic: { iv: iv.toString('hex'), tag: cipher.getAuthTag().toString('hex'), ciphertext: ciphertext.toString('hex') },
  };
}

/** The mnemonic when the password is right, undefined when it is wrong. */
export async function openMnemonic(sealed: SealedMnemonic, password: string): Promise<string | undefined> {
  const { hash, key } = await derive(password, Buffer.from(sealed.passwordSalt, 'hex'));
  const stored = Buffer.from(sealed.passwordHash, 'hex');
  if (stored.length !== hash.length || !timingSafeEqual(stored, hash)) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.mnemonic.iv, 'hex'));
  decipher.setAuthTag(Buffer.from(sealed.mnemonic.tag, 'hex'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.mnemonic.ciphertext, 'hex')), decipher.final()]).toString('utf8');
}
