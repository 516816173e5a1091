// The envelope of a devnode backup file: a fixed header, the AES-256-GCM ciphertext of the archive
// (backup-archive.ts), then the 16-byte GCM tag. The header travels in clear but is authenticated
// (it is the cipher's additional data), and carries a hash of the password so a wrong password is
// told apart from a damaged file at once, not after decrypting hundreds of megabytes.
//
//   offset  size  field
//   0       8     magic "DNBACKUP"
//   8       1     format version (1)
//   9       3     scrypt cost: log2(N), r, p
//   12      16    scrypt salt (random)
//   28      12    GCM IV (random)
//   40      32    password check: first half of the scrypt output
//   72      8     first 8 bytes of SHA-256 over bytes 0-71 (a damaged header reads as corrupt)
import { createHash, randomBytes, scrypt } from 'node:crypto';
import { RlnError } from './errors.ts';

export const BACKUP_MAGIC = Buffer.from('DNBACKUP', 'ascii');
export const BACKUP_VERSION = 1;
export const HEADER_BYTES = 80;
export const TAG_BYTES = 16;
export const CIPHER = 'aes-256-gcm';

export interface ScryptCost {
  logN: number;
  r: number;
  p: number;
}

// The same cost as the wallet file (scrypt's default, N=16384): tens of milliseconds per backup or
// restore, so tests stay fast; the cost is stored in the header, so it can be raised later.
export const DEFAULT_COST: ScryptCost = { logN: 14, r: 8, p: 1 };

export interface BackupHeader {
  cost: ScryptCost;
  salt: Buffer;
  iv: Buffer;
  passwordCheck: Buffer;
}

export interface BackupKeys {
  passwordCheck: Buffer;
  key: Buffer;
}

/** A file that is not a complete, intact devnode backup. */
export class CorruptBackupError extends RlnError {
  constructor(reason: string) {
    super('InvalidRequest', `backup file is corrupt or truncated: ${reason}`);
  }
}

export function newHeaderSecrets(): { salt: Buffer; iv: Buffer } {
  return { salt: randomBytes(16), iv: randomBytes(12) };
}

/** One scrypt run: the first 32 bytes tell a wrong password, the other 32 are the AES key. */
export function deriveBackupKeys(password: string, salt: Buffer, cost: ScryptCost): Promise<BackupKeys> {
  const N = 2 ** cost.logN;
  return new Promise((resolve, reject) => {
    scrypt(password, salt, 64, { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r }, (err, out) =>
      err ? reject(err) : resolve({ passwordCheck: out.subarray(0, 32), key: out.subarray(32) }),
    );
  });
}

export function encodeHeader(header: BackupHeader): Buffer {
  const out = Buffer.alloc(HEADER_BYTES);
  BACKUP_MAGIC.copy(out, 0);
  out.writeUInt8(BACKUP_VERSION, 8);
  out.writeUInt8(header.cost.logN, 9);
  out.writeUInt8(header.cost.r, 10);
  out.writeUInt8(header.cost.p, 11);
  header.salt.copy(out, 12);
  header.iv.copy(out, 28);
  header.passwordCheck.copy(out, 40);
  headerDigest(out).copy(out, 72);
  return out;
}

/** Reads a header; a different version is RLN's UnsupportedBackupVersion, anything else odd is corrupt. */
export function decodeHeader(bytes: Buffer): BackupHeader {
  if (bytes.length < HEADER_BYTES) throw new CorruptBackupError('shorter than the header');
  if (!bytes.subarray(0, 8).equals(BACKUP_MAGIC)) throw new CorruptBackupError('not a devnode backup (bad magic)');
  const version = bytes.readUInt8(8);
  if (version !== BACKUP_VERSION) throw new RlnError('UnsupportedBackupVersion', String(version));
  if (!headerDigest(bytes).equals(bytes.subarray(72, 80))) throw new CorruptBackupError('header checksum mismatch');
  const cost = { logN: bytes.readUInt8(9), r: bytes.readUInt8(10), p: bytes.readUInt8(11) };
  // Bounds keep a crafted header from asking scrypt for gigabytes of memory.
  if (cost.logN < 10 || cost.logN > 20 || cost.r < 1 || cost.r > 32 || cost.p < 1 || cost.p > 16) {
    throw new CorruptBackupError(`unreasonable scrypt cost ${JSON.stringify(cost)}`);
  }
  return {
    cost,
    salt: Buffer.from(bytes.subarray(12, 28)),
    iv: Buffer.from(bytes.subarray(28, 40)),
    passwordCheck: Buffer.from(bytes.subarray(40, 72)),
  };
}

function headerDigest(header: Buffer): Buffer {
  return createHash('sha256').update(header.subarray(0, 72)).digest().subarray(0, 8);
}
