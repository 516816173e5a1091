// Rotating the unlock seal's key: a new key becomes current, every sealed value in the database is
// re-sealed with it, and the old key is dropped. Each kind of sealed value (auto-unlock passwords
// today) is a SealedValueStore handed in by the composition root, so a new use of the seal adds
// its store there and rotation covers it.
//
// Crash-safe in that order: until the last step the file holds both keys, so whatever a crash
// leaves half re-sealed still opens, and running the rotation again finishes the job.
import type { Database, Queryable } from '../db/database.ts';
import { SealError, type UnlockSeal } from './unlock-seal.ts';

export interface SealedValue {
  /** Which row (a node id, ...): the store's own key. */
  id: string;
  sealed: string;
  /** What it was sealed with; the same is needed to open it. */
  associatedData: string;
}

export interface SealedValueStore {
  /** What the values are, for messages ("auto-unlock passwords"). */
  what: string;
  list(db: Queryable): Promise<SealedValue[]>;
  /** Replaces `from` with `to` unless the value changed meanwhile (then it is left alone). */
  replace(db: Queryable, id: string, from: string, to: string): Promise<void>;
}

export interface RotationResult {
  keyId: string;
  previousKeyIds: string[];
  /** Values re-sealed with the new key. */
  resealed: number;
  /** Values no key of the file opens (sealed with a key lost before, or altered): left as they are. */
  unreadable: number;
}

export interface ResealResult {
  keyId: string;
  resealed: number;
  unreadable: number;
}

// A value written by a request that read the key file just before the new key was added can land
// after a pass; a few passes catch it before the old key is dropped.
const MAX_PASSES = 5;

export class UnlockSealKeys {
  constructor(private readonly deps: { db: Database; seal: UnlockSeal; stores: SealedValueStore[] }) {}

  /** New key, everything re-sealed with it, old keys dropped: `rln-cloud unlock-seal-key rotate`. */
  async rotate(): Promise<RotationResult> {
    const { keyId, previousKeyIds } = this.deps.seal.addCurrentKey();
    let resealed = 0;
    let unreadable = 0;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const result = await this.reseal();
      resealed += result.resealed;
      unreadable = result.unreadable;
      if (result.resealed === 0) break;
    }
    this.deps.seal.dropOldKeys();
    return { keyId, previousKeyIds, resealed, unreadable };
  }

  /**
   * Re-seals every value not sealed with the current key, changing no file: for a key file the
   * service cannot write (a Kubernetes Secret, where the operator puts the new key first, runs
   * this, then removes the old key): `rln-cloud unlock-seal-key reseal`.
   */
  async reseal(): Promise<ResealResult> {
    const { seal, db, stores } = this.deps;
    const [current] = seal.keyIds();
    let resealed = 0;
    let unreadable = 0;
    for (const store of stores) {
      for (const value of await store.list(db)) {
        let plaintext: string;
        try {
          if (seal.keyIdOf(value.sealed) === current) continue;
          plaintext = seal.open(value.sealed, value.associatedData);
        } catch (err) {
          if (!(err instanceof SealError)) throw err;
          unreadable++;
          continue;
        }
        await store.replace(db, value.id, value.sealed, seal.seal(plaintext, value.associatedData));
        resealed++;
      }
    }
    return { keyId: current!, resealed, unreadable };
  }

  /**
   * How many stored values name a key the file does not hold: after the key file was lost or
   * replaced, each of them is turned off at its next use. Logged at start, so the operator hears
   * it before the users do.
   */
  async countUnknownKeys(): Promise<{ count: number; keyIds: string[] }> {
    const known = new Set(this.deps.seal.keyIds());
    const unknown: string[] = [];
    for (const store of this.deps.stores) {
      for (const value of await store.list(this.deps.db)) {
        let keyId: string;
        try {
          keyId = this.deps.seal.keyIdOf(value.sealed);
        } catch {
          keyId = 'malformed';
        }
        if (!known.has(keyId)) unknown.push(keyId);
      }
    }
    return { count: unknown.length, keyIds: [...new Set(unknown)] };
  }
}
