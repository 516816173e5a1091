// The Ed25519 keys that sign webhooks. They live in one file (mode 0600): created at the first
// start, or provided by the operator (a bare PKCS#8 PEM private key, or this keyring's JSON, which
// several replicas can share). Rotation puts a new key first and keeps the old one signing until
// its overlap ends, so receivers that still hold the old public key keep verifying.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { writeSecretFile } from '../secret-file.ts';

interface StoredKey {
  id: string;
  privateKeyPem: string;
  createdAt: string;
  /** Set on a rotated-out key: it signs alongside the current key until then. */
  retiresAt: string | null;
}

interface KeyringFile {
  version: 1;
  /** The current key first. */
  keys: StoredKey[];
}

export interface SigningKey {
  id: string;
  privateKey: KeyObject;
  publicKeyPem: string;
  retiresAt: Date | null;
}

export interface RotationResult {
  keyId: string;
  publicKey: string;
  previousKeyId: string | null;
  previousRetiresAt: string | null;
}

// With a callback, crypto.sign runs on the thread pool instead of the calling thread.
const signOnThreadPool = promisify(sign);

const keyIdOf = (publicKey: KeyObject) =>
  `whk_${createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16)}`;

function newStoredKey(): StoredKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    id: keyIdOf(publicKey),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    createdAt: new Date().toISOString(),
    retiresAt: null,
  };
}

function parseKeyring(text: string, path: string): KeyringFile {
  if (text.trimStart().startsWith('-----BEGIN')) {
    // A bare PEM key given by the operator: one current key, never retiring.
    const privateKey = createPrivateKey(text);
    return { version: 1, keys: [{ id: keyIdOf(createPublicKey(privateKey)), privateKeyPem: text, createdAt: '', retiresAt: null }] };
  }
  const parsed = JSON.parse(text) as KeyringFile;
  if (parsed?.version !== 1 || !Array.isArray(parsed.keys) || parsed.keys.length === 0) {
    throw new Error(`${path} is neither a PEM private key nor an rln-cloud webhook keyring`);
  }
  return parsed;
}

/** Writes the keyring with mode 0600: atomically, or exclusively (EEXIST when the file exists). */
function writeKeyring(path: string, ring: KeyringFile, exclusive: boolean) {
  writeSecretFile(path, `${JSON.stringify(ring, null, 2)}\n`, { exclusive });
}

export class WebhookKeyring {
  private cached: { mtimeMs: number; size: number; keys: SigningKey[] } | undefined;
  private checkedAt = 0;

  constructor(
    private readonly path: string,
    /** The overlap of a rotation when the operator does not give one (WEBHOOK_KEY_OVERLAP). */
    private readonly defaultOverlapMs: number,
  ) {}

  /** Creates the keyring with a fresh key unless it exists (several replicas may race: one wins). */
  ensure(): void {
    try {
      writeKeyring(this.path, { version: 1, keys: [newStoredKey()] }, true);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    this.load(true);
  }

  /** The keys that sign now: the current one, then rotated-out keys still in their overlap. */
  signingKeys(now = new Date()): SigningKey[] {
    return this.load(false).filter((k, i) => i === 0 || (k.retiresAt !== null && k.retiresAt > now));
  }

  currentPublicKeyPem(): string {
    return this.load(false)[0]!.publicKeyPem;
  }

  /**
   * `v1a,<base64>` signatures of `<id>.<timestamp>.<body>` by every signing key, space-separated.
   * Signed on libuv's thread pool: an Ed25519 signature is 25-150 µs of CPU, which on the event
   * loop would be taken from the POSTs and database round trips of every other delivery.
   */
  async signatureHeader(webhookId: string, timestamp: number, body: string): Promise<string> {
    const content = Buffer.from(`${webhookId}.${timestamp}.${body}`);
    const signatures = await Promise.all(this.signingKeys().map((k) => signOnThreadPool(null, content, k.privateKey)));
    return signatures.map((s) => `v1a,${s.toString('base64')}`).join(' ');
  }

  /** Makes a new key current; the old one keeps signing for `overlapMs`. */
  rotate(overlapMs = this.defaultOverlapMs): RotationResult {
    this.ensure();
    const ring = parseKeyring(readFileSync(this.path, 'utf8'), this.path);
    const now = Date.now();
    const previous = ring.keys[0]!;
    previous.retiresAt = new Date(now + overlapMs).toISOString();
    const fresh = newStoredKey();
    // Keys whose overlap already ended sign nothing; dropping them keeps the file short.
    const kept = ring.keys.filter((k) => k.retiresAt !== null && Date.parse(k.retiresAt) > now);
    writeKeyring(this.path, { version: 1, keys: [fresh, ...kept] }, false);
    this.load(true);
    return {
      keyId: fresh.id,
      publicKey: this.currentPublicKeyPem(),
      previousKeyId: overlapMs > 0 ? previous.id : null,
      previousRetiresAt: overlapMs > 0 ? previous.retiresAt : null,
    };
  }

  /**
   * Reads the file when it changed. Checked at most once a second: a rotation by the CLI (another
   * process) reaches the running service within a second, without a stat per signature.
   */
  private load(force: boolean): SigningKey[] {
    if (!force && this.cached && Date.now() - this.checkedAt < 1000) return this.cached.keys;
    const stat = statSync(this.path);
    this.checkedAt = Date.now();
    if (!force && this.cached && this.cached.mtimeMs === stat.mtimeMs && this.cached.size === stat.size) return this.cached.keys;
    const ring = parseKeyring(readFileSync(this.path, 'utf8'), this.path);
    const keys = ring.keys.map((k) => {
      const privateKey = createPrivateKey(k.privateKeyPem);
      if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`${this.path}: webhook signing keys must be Ed25519`);
      return {
        id: k.id,
        privateKey,
        publicKeyPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
        retiresAt: k.retiresAt ? new Date(k.retiresAt) : null,
      };
    });
    this.cached = { mtimeMs: stat.mtimeMs, size: stat.size, keys };
    return keys;
  }
}
