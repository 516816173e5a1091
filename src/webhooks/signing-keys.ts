// The keys that sign webhooks. They live in one file (mode 0600, keyring-file.ts): created at the
// first start, or provided by the operator (bare PEM private keys, or this keyring's JSON, which
// several replicas can share). Two schemes, each with its own keys and its own rotation:
// - Standard Webhooks (Ed25519): rotation puts a new key first and keeps the old one signing
//   beside it until its overlap ends; the header carries both signatures meanwhile.
// - X-ThunderStack-Signature (RSA): the header carries ONE signature, so a rotation publishes the
//   new key at once (GET /api/webhook-public-keys, not yet current) while the old key keeps
//   signing until the overlap ends; then the new key signs. The old key stays published for as
//   long again, so a signature made just before the switch still verifies with a listed key.
import { createPublicKey, sign, type KeyObject } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import {
  isReadOnlyError,
  newEd25519Key,
  newRsaKey,
  privateKeyOf,
  readKeyring,
  withKeyringLock,
  writeKeyring,
  type StoredRsaKey,
} from './keyring-file.ts';
import { SCHEME_HEADERS, SIGNATURE_SCHEMES, type SignatureScheme } from './signature-schemes.ts';

export interface SigningKey {
  id: string;
  privateKey: KeyObject;
  publicKeyPem: string;
  createdAt: Date | null;
  retiresAt: Date | null;
}

interface RsaSigningKey extends SigningKey {
  signsFrom: Date | null;
}

interface LoadedKeys {
  /** Ed25519, the current key first. */
  ed25519: SigningKey[];
  /** RSA, the newest first. */
  rsa: RsaSigningKey[];
}

/** A key as GET /api/webhook-public-keys shows it. */
export interface PublishedKey {
  scheme: SignatureScheme;
  header: string;
  keyId: string;
  publicKey: string;
  /** Signs now (Standard Webhooks: the newest of the keys signing; ThunderStack: the one signing). */
  current: boolean;
  createdAt: string | null;
  /** When it signs from (null: since before any rotation the keyring remembers). */
  signsFrom: string | null;
  /** When it stops signing, when that is known. */
  signsUntil: string | null;
  /** When it is no longer published. */
  retiresAt: string | null;
}

export interface RotationResult {
  keyId: string;
  publicKey: string;
  previousKeyId: string | null;
  previousRetiresAt: string | null;
  /** The RSA key of X-ThunderStack-Signature: published now, signing from `signsFrom`. */
  thunderStack: { keyId: string; publicKey: string; signsFrom: string; previousKeyId: string | null; previousRetiresAt: string | null } | null;
}

// With a callback, crypto.sign runs on the thread pool instead of the calling thread.
const signOnThreadPool = promisify(sign);

const RSA: SignatureScheme = 'thunderstack-rsa-sha256';
const V1A: SignatureScheme = 'standard-webhooks-v1a';

const iso = (d: Date | null) => d?.toISOString() ?? null;
const dateOf = (text: string | null) => (text ? new Date(text) : null);
const publicPemOf = (privateKey: KeyObject) => createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();

export class WebhookKeyring {
  private cached: { mtimeMs: number; size: number; keys: LoadedKeys } | undefined;
  private checkedAt = 0;
  private readonly schemes: ReadonlySet<SignatureScheme>;

  constructor(
    private readonly path: string,
    /** The overlap of a rotation when the operator does not give one (WEBHOOK_KEY_OVERLAP). */
    private readonly defaultOverlapMs: number,
    /** The schemes that sign (WEBHOOK_SIGNATURE_SCHEMES). */
    schemes: readonly SignatureScheme[] = SIGNATURE_SCHEMES,
  ) {
    this.schemes = new Set(schemes);
  }

  /**
   * Creates the keyring unless it exists, and adds a key a turned-on scheme lacks (a keyring of an
   * earlier release has no RSA key). Replicas may race: the file is created exclusively and changed
   * under a lock, so one key is added and every replica signs with it. Answers warnings to log: a
   * file the service cannot write (a Kubernetes Secret) without an RSA key signs without that scheme.
   */
  ensure(): string[] {
    const wantRsa = this.schemes.has(RSA);
    const wantEd25519 = this.schemes.has(V1A);
    // Checked first only to spare an RSA key generation (tenths of a second) at every start; the
    // exclusive create is what decides between replicas starting together.
    if (!existsSync(this.path)) {
      try {
        writeKeyring(this.path, { version: 1, keys: [newEd25519Key()], rsaKeys: wantRsa ? [newRsaKey(null)] : [] }, true);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    const lacks = () => {
      const ring = readKeyring(this.path);
      return { ed25519: wantEd25519 && ring.keys.length === 0, rsa: wantRsa && ring.rsaKeys!.length === 0 };
    };
    const warnings: string[] = [];
    const missing = lacks();
    if (missing.ed25519 || missing.rsa) {
      try {
        withKeyringLock(this.path, () => {
          // Another replica may have added it while this one waited for the lock.
          const ring = readKeyring(this.path);
          const needEd25519 = wantEd25519 && ring.keys.length === 0;
          const needRsa = wantRsa && ring.rsaKeys!.length === 0;
          if (!needEd25519 && !needRsa) return;
          if (needEd25519) ring.keys.push(newEd25519Key());
          if (needRsa) ring.rsaKeys!.push(newRsaKey(null));
          writeKeyring(this.path, ring, false);
        });
      } catch (err) {
        if (!isReadOnlyError(err)) throw err;
        if (missing.ed25519) {
          throw new Error(`${this.path} has no Ed25519 key and cannot be written: add one (openssl genpkey -algorithm ed25519), or leave standard-webhooks-v1a out of WEBHOOK_SIGNATURE_SCHEMES`);
        }
        // Webhooks with no signature at all would be worse than not starting.
        if (!wantEd25519) {
          throw new Error(`${this.path} has no RSA key and cannot be written, and WEBHOOK_SIGNATURE_SCHEMES names no other scheme: add one (openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048)`);
        }
        warnings.push(
          `${this.path} has no RSA key and cannot be written, so webhooks carry no X-ThunderStack-Signature: append one ` +
            '(openssl genpkey -algorithm rsa -pkeyopt rsa_keygen_bits:2048) or add rsaKeys to the keyring (docs/WEBHOOKS.md), ' +
            'or leave thunderstack-rsa-sha256 out of WEBHOOK_SIGNATURE_SCHEMES',
        );
      }
    }
    this.load(true);
    return warnings;
  }

  /** The schemes that sign: those turned on, less RSA while the keyring has no RSA key. */
  activeSchemes(): SignatureScheme[] {
    const keys = this.load(false);
    return SIGNATURE_SCHEMES.filter((s) => this.schemes.has(s) && (s === RSA ? keys.rsa.length > 0 : keys.ed25519.length > 0));
  }

  /** The Ed25519 keys that sign now: the current one, then rotated-out keys still in their overlap. */
  signingKeys(now = new Date()): SigningKey[] {
    return this.load(false).ed25519.filter((k, i) => i === 0 || (k.retiresAt !== null && k.retiresAt > now));
  }

  /** The current Ed25519 key's public key. */
  currentPublicKeyPem(): string {
    return this.load(false).ed25519[0]!.publicKeyPem;
  }

  /** The public key of the RSA key signing X-ThunderStack-Signature now; undefined without one. */
  thunderStackPublicKeyPem(now = new Date()): string | undefined {
    return this.schemes.has(RSA) ? this.rsaSigner(now)?.publicKeyPem : undefined;
  }

  /** Every key in use by a turned-on scheme, current ones first within each scheme. */
  publishedKeys(now = new Date()): PublishedKey[] {
    const keys = this.load(false);
    const out: PublishedKey[] = [];
    const active = this.activeSchemes();
    if (active.includes(RSA)) {
      const signer = this.rsaSigner(now);
      const live = keys.rsa.filter((k) => k.retiresAt === null || k.retiresAt > now);
      for (const k of [...live.filter((k) => k === signer), ...live.filter((k) => k !== signer)]) {
        // It signs until the next newer key starts signing.
        const newer = keys.rsa[keys.rsa.indexOf(k) - 1];
        out.push(this.published(RSA, k, k === signer, k.signsFrom ?? k.createdAt, newer?.signsFrom ?? null));
      }
    }
    if (active.includes(V1A)) {
      for (const [i, k] of this.signingKeys(now).entries()) out.push(this.published(V1A, k, i === 0, k.createdAt, k.retiresAt));
    }
    return out;
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

  /**
   * The original service's signature: base64 RSA-SHA256, PKCS#1 v1.5, over the body alone, by the
   * one key signing now. About 1 ms of CPU at 2048 bits, hence the thread pool.
   */
  async thunderStackSignature(body: string): Promise<string | undefined> {
    const signer = this.rsaSigner(new Date());
    if (!signer) return undefined;
    return (await signOnThreadPool('sha256', Buffer.from(body), signer.privateKey)).toString('base64');
  }

  /** The signature headers of one attempt, one per scheme that signs, each signed once. */
  async signedHeaders(webhookId: string, timestamp: number, body: string): Promise<Record<string, string>> {
    const active = this.activeSchemes();
    const [v1a, rsa] = await Promise.all([
      active.includes(V1A) ? this.signatureHeader(webhookId, timestamp, body) : undefined,
      active.includes(RSA) ? this.thunderStackSignature(body) : undefined,
    ]);
    const headers: Record<string, string> = {};
    if (v1a !== undefined) headers[SCHEME_HEADERS[V1A]] = v1a;
    if (rsa !== undefined) headers[SCHEME_HEADERS[RSA]] = rsa;
    return headers;
  }

  /**
   * Makes a new Ed25519 key current, the old one signing beside it for `overlapMs`; and publishes
   * a new RSA key that signs from `overlapMs` on, the old one signing until then and published for
   * `overlapMs` more. An overlap of 0 switches both at once (a key that leaked).
   */
  rotate(overlapMs = this.defaultOverlapMs): RotationResult {
    this.ensure();
    const result = withKeyringLock(this.path, () => {
      const ring = readKeyring(this.path);
      const now = Date.now();
      const at = (ms: number) => new Date(now + ms).toISOString();
      const previous = ring.keys[0];
      if (previous) previous.retiresAt = at(overlapMs);
      const fresh = newEd25519Key();
      // Keys whose overlap already ended sign nothing; dropping them keeps the file short.
      const kept = ring.keys.filter((k) => k.retiresAt !== null && Date.parse(k.retiresAt) > now);
      ring.keys = [fresh, ...kept];

      let thunderStack: RotationResult['thunderStack'] = null;
      const rsaKeys = ring.rsaKeys!;
      if (rsaKeys.length > 0 || this.schemes.has(RSA)) {
        const newest = rsaKeys[0];
        if (newest && newest.retiresAt === null) newest.retiresAt = at(2 * overlapMs);
        const freshRsa = newRsaKey(new Date(now + overlapMs));
        // A key never rotated out (a second bare PEM key) would never sign again: dropped.
        const keptRsa: StoredRsaKey[] = rsaKeys.filter((k) => k.retiresAt !== null && Date.parse(k.retiresAt) > now);
        ring.rsaKeys = [freshRsa, ...keptRsa];
        const previousKept = newest !== undefined && keptRsa.includes(newest);
        thunderStack = {
          keyId: freshRsa.id,
          publicKey: publicPemOf(privateKeyOf(freshRsa, 'rsa', this.path)),
          signsFrom: freshRsa.signsFrom!,
          previousKeyId: previousKept ? newest.id : null,
          previousRetiresAt: previousKept ? newest.retiresAt : null,
        };
      }
      writeKeyring(this.path, ring, false);
      return { fresh, previous: overlapMs > 0 ? previous : undefined, thunderStack };
    });
    this.load(true);
    return {
      keyId: result.fresh.id,
      publicKey: this.currentPublicKeyPem(),
      previousKeyId: result.previous?.id ?? null,
      previousRetiresAt: result.previous?.retiresAt ?? null,
      thunderStack: result.thunderStack,
    };
  }

  /** The RSA key that signs at `now`: the newest whose signsFrom has come and that is not retired. */
  private rsaSigner(now: Date): RsaSigningKey | undefined {
    return this.load(false).rsa.find((k) => (k.signsFrom === null || k.signsFrom <= now) && (k.retiresAt === null || k.retiresAt > now));
  }

  private published(scheme: SignatureScheme, k: SigningKey, current: boolean, signsFrom: Date | null, signsUntil: Date | null): PublishedKey {
    return {
      scheme,
      header: SCHEME_HEADERS[scheme],
      keyId: k.id,
      publicKey: k.publicKeyPem,
      current,
      createdAt: iso(k.createdAt),
      signsFrom: iso(signsFrom),
      signsUntil: iso(signsUntil),
      retiresAt: iso(k.retiresAt),
    };
  }

  /**
   * Reads the file when it changed. Checked at most once a second: a rotation by the CLI (another
   * process) reaches the running service within a second, without a stat per signature.
   */
  private load(force: boolean): LoadedKeys {
    if (!force && this.cached && Date.now() - this.checkedAt < 1000) return this.cached.keys;
    const stat = statSync(this.path);
    this.checkedAt = Date.now();
    if (!force && this.cached && this.cached.mtimeMs === stat.mtimeMs && this.cached.size === stat.size) return this.cached.keys;
    const ring = readKeyring(this.path);
    const loaded = (k: { id: string; privateKeyPem: string; createdAt: string; retiresAt: string | null }, type: 'ed25519' | 'rsa'): SigningKey => {
      const privateKey = privateKeyOf(k, type, this.path);
      return { id: k.id, privateKey, publicKeyPem: publicPemOf(privateKey), createdAt: dateOf(k.createdAt), retiresAt: dateOf(k.retiresAt) };
    };
    const keys: LoadedKeys = {
      ed25519: ring.keys.map((k) => loaded(k, 'ed25519')),
      rsa: ring.rsaKeys!.map((k) => ({ ...loaded(k, 'rsa'), signsFrom: dateOf(k.signsFrom) })),
    };
    if (this.schemes.has(V1A) && keys.ed25519.length === 0) throw new Error(`${this.path} has no Ed25519 key for Standard Webhooks`);
    this.cached = { mtimeMs: stat.mtimeMs, size: stat.size, keys };
    return keys;
  }
}
