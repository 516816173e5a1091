// The webhook keyring's file: its JSON form, the bare PEM keys an operator may give instead, and
// the lock that serialises changes to it (replicas sharing one file add a missing key, or rotate,
// one at a time). The service's keyring (signing-keys.ts) reads and changes it only through here.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { openSync, closeSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { writeSecretFile } from '../platform/secret-file.ts';

/** An Ed25519 key of the Standard Webhooks scheme. */
export interface StoredKey {
  id: string;
  privateKeyPem: string;
  createdAt: string;
  /** Set on a rotated-out key: it signs alongside the current key until then. */
  retiresAt: string | null;
}

/** An RSA key of the original service's X-ThunderStack-Signature (one signature a request). */
export interface StoredRsaKey extends StoredKey {
  /** When it starts signing (null: from the start). Before then it is only published. */
  signsFrom: string | null;
  /** When it stops being published; it signs only until the next newer key's signsFrom. */
  retiresAt: string | null;
}

export interface KeyringFile {
  version: 1;
  /** Ed25519, the current key first. */
  keys: StoredKey[];
  /**
   * RSA, the newest first. A field of its own, which readers of version 1 ignore: a replica of the
   * previous release sharing the file keeps loading it during a rolling upgrade.
   */
  rsaKeys?: StoredRsaKey[];
}

/**
 * 2048 bits: what the original's receivers accept, secure until 2030 by NIST's reckoning, and less
 * than half the signing CPU of 3072 bits (2.8 against 6.9 ms measured on a busy build machine; every
 * delivery attempt signs once). The scheme carries no timestamp, so replay, not the key's size, is
 * its weakness; an operator may give a larger key.
 */
export const RSA_BITS = 2048;
const MIN_RSA_BITS = 2048;

export const keyIdOf = (publicKey: KeyObject) =>
  `whk_${createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16)}`;

export function newEd25519Key(): StoredKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { id: keyIdOf(publicKey), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), createdAt: new Date().toISOString(), retiresAt: null };
}

export function newRsaKey(signsFrom: Date | null): StoredRsaKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: RSA_BITS });
  return {
    id: keyIdOf(publicKey),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    createdAt: new Date().toISOString(),
    signsFrom: signsFrom?.toISOString() ?? null,
    retiresAt: null,
  };
}

/** The private key of a stored key, checked to be of the type its list holds. */
export function privateKeyOf(stored: StoredKey, type: 'ed25519' | 'rsa', path: string): KeyObject {
  const key = createPrivateKey(stored.privateKeyPem);
  if (type === 'ed25519' && key.asymmetricKeyType !== 'ed25519') throw new Error(`${path}: webhook signing keys must be Ed25519`);
  if (type === 'rsa' && (key.asymmetricKeyType !== 'rsa' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS)) {
    throw new Error(`${path}: the X-ThunderStack-Signature keys (rsaKeys) must be RSA of at least ${MIN_RSA_BITS} bits`);
  }
  return key;
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;

/**
 * Bare PEM private keys given by the operator (a Kubernetes Secret made with openssl): an Ed25519
 * key, optionally followed by an RSA key for X-ThunderStack-Signature. The first of each type signs.
 */
function parseBarePem(text: string, path: string): KeyringFile {
  const ring: KeyringFile = { version: 1, keys: [], rsaKeys: [] };
  for (const [block] of text.matchAll(PEM_BLOCK)) {
    const privateKey = createPrivateKey(block);
    const id = keyIdOf(createPublicKey(privateKey));
    if (privateKey.asymmetricKeyType === 'rsa') ring.rsaKeys!.push({ id, privateKeyPem: block, createdAt: '', signsFrom: null, retiresAt: null });
    else if (privateKey.asymmetricKeyType === 'ed25519') ring.keys.push({ id, privateKeyPem: block, createdAt: '', retiresAt: null });
    else throw new Error(`${path}: webhook signing keys must be Ed25519 (and RSA for X-ThunderStack-Signature), not ${privateKey.asymmetricKeyType}`);
  }
  if (ring.keys.length + ring.rsaKeys!.length === 0) throw new Error(`${path} holds no PEM private key`);
  return ring;
}

export function parseKeyring(text: string, path: string): KeyringFile {
  if (text.trimStart().startsWith('-----BEGIN')) return parseBarePem(text, path);
  const parsed = JSON.parse(text) as KeyringFile;
  const rsaKeys = parsed?.rsaKeys ?? [];
  if (parsed?.version !== 1 || !Array.isArray(parsed.keys) || !Array.isArray(rsaKeys) || parsed.keys.length + rsaKeys.length === 0) {
    throw new Error(`${path} is neither a PEM private key nor an rln-cloud webhook keyring`);
  }
  return { version: 1, keys: parsed.keys, rsaKeys };
}

export function readKeyring(path: string): KeyringFile {
  return parseKeyring(readFileSync(path, 'utf8'), path);
}

/** Writes the keyring with mode 0600: atomically, or exclusively (EEXIST when the file exists). */
export function writeKeyring(path: string, ring: KeyringFile, exclusive: boolean) {
  const { rsaKeys, ...rest } = ring;
  const file: KeyringFile = rsaKeys && rsaKeys.length > 0 ? { ...rest, rsaKeys } : rest;
  writeSecretFile(path, `${JSON.stringify(file, null, 2)}\n`, { exclusive });
}

/** A file the service may not write: a Kubernetes Secret, a read-only mount. */
export const isReadOnlyError = (err: unknown) => ['EACCES', 'EPERM', 'EROFS'].includes((err as NodeJS.ErrnoException).code ?? '');

// A lock older than this was left by a process that died holding it: what it guards (one key
// generated, one file written) takes well under a second.
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 30_000;

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs `change` holding `<path>.lock` (created exclusively beside the file), so replicas sharing the
 * file, or a rotation by the CLI beside a starting replica, read-modify-write it one at a time.
 * Synchronous: it runs at start and in the CLI, never while serving.
 */
export function withKeyringLock<T>(path: string, change: () => T): T {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let age = 0;
      try {
        age = Date.now() - statSync(lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > STALE_LOCK_MS) {
        try {
          unlinkSync(lock);
        } catch {
          // Another process removed it first.
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock} has been held for ${LOCK_WAIT_MS} ms; remove it if no rln-cloud process is starting`);
      sleepSync(50);
    }
  }
  try {
    return change();
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      // Taken as stale by another process: nothing of ours to remove.
    }
  }
}
