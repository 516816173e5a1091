// The seal for secrets the service must read back but must not keep readable in the database:
// AES-256-GCM under a key-encryption key that lives in a file (UNLOCK_SEAL_KEY_FILE, mode 0600),
// never in the database. The database alone gives ciphertext; the file alone gives a key with
// nothing to open. Generic on purpose (any secret, any associated data): the associated data
// binds a sealed value to what it belongs to (a node and a use), so a value copied onto another
// row or into another use does not open.
//
// The file is a versioned keyring, current key first. Every sealed value names the key that
// sealed it, so a rotation can make a new key current, re-seal the stored values with it and then
// drop the old key (secrets/unlock-seal-keys.ts). A running service sees a rotation made by the
// CLI (another process) without a restart: sealing always reads the current key, and opening a
// value whose key it does not know reads the file again first.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { writeSecretFile } from '../platform/secret-file.ts';

const FORMAT = 'us1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
// A bare key, as `openssl rand -base64 32` prints it: how an operator provides one by hand.
const BARE_KEY = /^[A-Za-z0-9+/]{43}=$/;

interface StoredKey {
  id: string;
  /** 32 bytes, base64. */
  key: string;
  createdAt: string;
}

interface KeyringFile {
  version: 1;
  /** The current key first; the others only open values sealed before a rotation. */
  keys: StoredKey[];
}

interface SealKey {
  id: string;
  key: Buffer;
  createdAt: string;
}

const toStored = (k: SealKey): StoredKey => ({ id: k.id, key: k.key.toString('base64'), createdAt: k.createdAt });

/** The key file cannot be read or is not a keyring: a start-up error, or a retry later. */
export class SealKeyFileError extends Error {
  override name = 'SealKeyFileError';
}

/** This sealed value does not open: malformed, sealed with a key the file lacks, tampered with, or other associated data. */
export class SealError extends Error {
  override name = 'SealError';
}

/** A key's id, derived from the key, so a hand-written keyring needs none and a wrong one is caught. */
export const sealKeyIdOf = (key: Buffer) =>
  `usk_${createHash('sha256').update('rln-cloud unlock seal key\0').update(key).digest('hex').slice(0, 16)}`;

function newStoredKey(): StoredKey {
  const key = randomBytes(KEY_BYTES);
  return { id: sealKeyIdOf(key), key: key.toString('base64'), createdAt: new Date().toISOString() };
}

/** Reads a keyring (or a bare base64 key); the message names the file and the problem, never a key. */
export function parseSealKeyring(text: string, path: string): SealKey[] {
  const problem = (what: string) => new SealKeyFileError(`${path} is not an unlock seal keyring: ${what}`);
  const trimmed = text.trim();
  let stored: Array<Partial<StoredKey>>;
  if (BARE_KEY.test(trimmed)) {
    stored = [{ key: trimmed }];
  } else {
    let parsed: Partial<KeyringFile>;
    try {
      parsed = JSON.parse(trimmed) as Partial<KeyringFile>;
    } catch {
      throw problem('neither JSON ({"version": 1, "keys": [...]}) nor one base64 key of 32 bytes');
    }
    if (parsed?.version !== 1) throw problem('"version" must be 1');
    if (!Array.isArray(parsed.keys) || parsed.keys.length === 0) throw problem('"keys" must list at least one key, the current one first');
    stored = parsed.keys;
  }
  const keys = stored.map((k, i) => {
    const key = typeof k?.key === 'string' ? Buffer.from(k.key, 'base64') : Buffer.alloc(0);
    if (key.length !== KEY_BYTES || key.toString('base64') !== k.key) throw problem(`key ${i + 1} is not ${KEY_BYTES} bytes in base64`);
    const id = sealKeyIdOf(key);
    if (k.id !== undefined && k.id !== id) throw problem(`key ${i + 1} has the id ${String(k.id).slice(0, 40)}, but its key's id is ${id}`);
    return { id, key, createdAt: typeof k.createdAt === 'string' ? k.createdAt : '' };
  });
  if (new Set(keys.map((k) => k.id)).size !== keys.length) throw problem('a key is listed twice');
  return keys;
}

/** Writes the keyring with mode 0600: atomically, or exclusively (EEXIST when the file exists). */
function writeKeyring(path: string, ring: KeyringFile, exclusive: boolean) {
  writeSecretFile(path, `${JSON.stringify(ring, null, 2)}\n`, { exclusive });
}

const b64url = (b: Buffer) => b.toString('base64url');

/**
 * Loads the keyring at `path`. With `createIfMissing` (the default path in DATA_DIR) a missing
 * file is created with a fresh key, mode 0600; without it (a file the operator named) a missing
 * or unreadable file is an error. A file that exists but is not a keyring is always an error.
 */
export function loadUnlockSeal(path: string, { createIfMissing }: { createIfMissing: boolean }): UnlockSeal {
  if (createIfMissing) {
    try {
      // Exclusive: several replicas starting at once on one shared directory create it once.
      writeKeyring(path, { version: 1, keys: [newStoredKey()] }, true);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new SealKeyFileError(`cannot create the unlock seal key file ${path}: ${(err as Error).message}`);
    }
  }
  const seal = new UnlockSeal(path);
  seal.keyIds(); // reads it now: a bad file stops the start, not the first unlock
  return seal;
}

export class UnlockSeal {
  private cached: { mtimeMs: number; size: number; keys: SealKey[] } | undefined;
  private checkedAt = 0;

  constructor(readonly path: string) {}

  /**
   * Encrypts `plaintext` under the current key, bound to `associatedData` (which is not stored:
   * the caller gives the same again to open it). Answers `us1.<keyId>.<iv>.<ciphertext+tag>`.
   */
  seal(plaintext: string, associatedData: string): string {
    const current = this.keys(true)[0]!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', current.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [FORMAT, current.id, b64url(iv), b64url(body)].join('.');
  }

  /** The plaintext of a value `seal` made with the same associated data; throws SealError otherwise. */
  open(sealed: string, associatedData: string): string {
    const { keyId, iv, body } = parseSealed(sealed);
    // A key sealed by a rotation the CLI made since this process last looked: read the file again.
    const key = this.keys(false).find((k) => k.id === keyId) ?? this.keys(true).find((k) => k.id === keyId);
    if (!key) throw new SealError(`sealed with the key ${keyId}, which the unlock seal key file does not hold`);
    const decipher = createDecipheriv('aes-256-gcm', key.key, iv);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError('the sealed value does not open: it was altered, or belongs to something else');
    }
  }

  /** The id of the key that sealed `sealed` (rotation re-seals those not sealed with the current key). */
  keyIdOf(sealed: string): string {
    return parseSealed(sealed).keyId;
  }

  /** The ids of the file's keys, the current one first. */
  keyIds(): string[] {
    return this.keys(true).map((k) => k.id);
  }

  /** Rotation, first step: a new key becomes current; the old ones stay to open what they sealed. */
  addCurrentKey(): { keyId: string; previousKeyIds: string[] } {
    const previous = this.keys(true);
    const fresh = newStoredKey();
    writeKeyring(this.path, { version: 1, keys: [fresh, ...previous.map(toStored)] }, false);
    this.keys(true);
    return { keyId: fresh.id, previousKeyIds: previous.map((k) => k.id) };
  }

  /** Rotation, last step, once nothing is sealed with them any more: only the current key is kept. */
  dropOldKeys(): string[] {
    const [current, ...old] = this.keys(true);
    if (old.length === 0) return [];
    writeKeyring(this.path, { version: 1, keys: [toStored(current!)] }, false);
    this.keys(true);
    return old.map((k) => k.id);
  }

  /** The keys, read again when the file changed; looked at at most once a second unless `fresh`. */
  private keys(fresh: boolean): SealKey[] {
    if (!fresh && this.cached && Date.now() - this.checkedAt < 1000) return this.cached.keys;
    let text: string;
    let stat: { mtimeMs: number; size: number };
    try {
      stat = statSync(this.path);
      if (this.cached && this.cached.mtimeMs === stat.mtimeMs && this.cached.size === stat.size) {
        this.checkedAt = Date.now();
        return this.cached.keys;
      }
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      throw new SealKeyFileError(`cannot read the unlock seal key file ${this.path}: ${(err as Error).message}`);
    }
    const keys = parseSealKeyring(text, this.path);
    this.cached = { mtimeMs: stat.mtimeMs, size: stat.size, keys };
    this.checkedAt = Date.now();
    return keys;
  }
}

function parseSealed(sealed: string) {
  const parts = sealed.split('.');
  const [format, keyId, iv, body] = parts;
  if (parts.length !== 4 || format !== FORMAT || !/^usk_[0-9a-f]{16}$/.test(keyId!)) throw new SealError('not a sealed value of this service');
  const ivBytes = Buffer.from(iv!, 'base64url');
  const bodyBytes = Buffer.from(body!, 'base64url');
  if (ivBytes.length !== IV_BYTES || bodyBytes.length < TAG_BYTES) throw new SealError('not a sealed value of this service');
  return { keyId: keyId!, iv: ivBytes, body: bodyBytes };
}
