// The unlock seal on its own: sealing and opening, what must not open, the key file (created 0600,
// given, bad), and rotation re-sealing every stored value through the generic store interface.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../db/database.ts';
import { loadUnlockSeal, parseSealKeyring, SealError, SealKeyFileError, sealKeyIdOf, UnlockSeal } from './unlock-seal.ts';
import { UnlockSealKeys, type SealedValue, type SealedValueStore } from './unlock-seal-keys.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rln-seal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const newSeal = () => loadUnlockSeal(join(dir, 'keys.json'), { createIfMissing: true });

describe('sealing and opening', () => {
  it('round-trips any text with the same associated data, and never shows it in the sealed value', () => {
    const seal = newSeal();
    for (const secret of ['password123', 'ünïcødé 🔑 with spaces', 'x'.repeat(1024)]) {
      const sealed = seal.seal(secret, 'auto-unlock/n1');
      expect(sealed).toMatch(/^us1\.usk_[0-9a-f]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(sealed).not.toContain(secret.slice(0, 8));
      expect(seal.open(sealed, 'auto-unlock/n1')).toBe(secret);
    }
  });

  it('seals the same text differently every time (a fresh IV)', () => {
    const seal = newSeal();
    expect(seal.seal('password123', 'a')).not.toBe(seal.seal('password123', 'a'));
  });

  it('does not open with other associated data: another node, another use', () => {
    const seal = newSeal();
    const sealed = seal.seal('password123', 'auto-unlock/n1');
    for (const other of ['auto-unlock/n2', 'restore/n1', '', 'auto-unlock/n1 ']) {
      expect(() => seal.open(sealed, other)).toThrow(SealError);
    }
  });

  it('does not open a value whose ciphertext, tag, IV or key id was altered', () => {
    const seal = newSeal();
    const sealed = seal.seal('password123', 'ad');
    const [format, keyId, iv, body] = sealed.split('.');
    const flip = (b64: string, at: number) => {
      const bytes = Buffer.from(b64, 'base64url');
      bytes[at] = bytes[at]! ^ 1;
      return bytes.toString('base64url');
    };
    const bodyLength = Buffer.from(body!, 'base64url').length;
    const altered = [
      [format, keyId, iv, flip(body!, 0)], // ciphertext
      [format, keyId, iv, flip(body!, bodyLength - 1)], // tag
      [format, keyId, flip(iv!, 0), body], // IV
      [format, `usk_${'0'.repeat(16)}`, iv, body], // another key
      [format, keyId, iv, Buffer.from(body!, 'base64url').subarray(0, 10).toString('base64url')], // cut short
    ];
    for (const parts of altered) expect(() => seal.open(parts.join('.'), 'ad')).toThrow(SealError);
    for (const garbage of ['', 'password123', 'us2.x.y.z', `us1.${keyId}.${iv}`]) expect(() => seal.open(garbage, 'ad')).toThrow(SealError);
  });

  it('does not open a value sealed under another key file', () => {
    const sealed = newSeal().seal('password123', 'ad');
    const other = loadUnlockSeal(join(dir, 'other.json'), { createIfMissing: true });
    expect(() => other.open(sealed, 'ad')).toThrow(/does not hold/);
  });
});

describe('the key file', () => {
  it('is created at the default path with mode 0600, once, and loaded again as it is', () => {
    const path = join(dir, 'keys.json');
    const first = loadUnlockSeal(path, { createIfMissing: true });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(JSON.parse(text)).toEqual({ version: 1, keys: [{ id: first.keyIds()[0], key: expect.any(String), createdAt: expect.any(String) }] });
    const again = loadUnlockSeal(path, { createIfMissing: true });
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(again.open(first.seal('pw', 'ad'), 'ad')).toBe('pw');
  });

  it('must exist when the operator named it', () => {
    expect(() => loadUnlockSeal(join(dir, 'missing.json'), { createIfMissing: false })).toThrow(SealKeyFileError);
    expect(() => loadUnlockSeal(join(dir, 'missing.json'), { createIfMissing: false })).toThrow(/cannot read .*missing\.json.*ENOENT/);
  });

  it('refuses what is not a keyring, naming the problem and never a key', () => {
    const key = randomBytes(32).toString('base64');
    const cases: Array<[string, RegExp]> = [
      ['', /neither JSON/],
      ['not json', /neither JSON/],
      ['{"version": 2, "keys": []}', /"version" must be 1/],
      ['{"version": 1, "keys": []}', /at least one key/],
      ['{"version": 1, "keys": [{"key": "c2hvcnQ="}]}', /key 1 is not 32 bytes/],
      [`{"version": 1, "keys": [{"key": "${key}", "id": "usk_0000000000000000"}]}`, /key 1 has the id usk_0000000000000000/],
      [`{"version": 1, "keys": [{"key": "${key}"}, {"key": "${key}"}]}`, /listed twice/],
    ];
    for (const [text, problem] of cases) {
      const path = join(dir, 'bad.json');
      writeFileSync(path, text);
      let error: unknown;
      try {
        loadUnlockSeal(path, { createIfMissing: true });
      } catch (err) {
        error = err;
      }
      expect(error, text).toBeInstanceOf(SealKeyFileError);
      expect((error as Error).message).toMatch(problem);
      expect((error as Error).message).not.toContain(key);
    }
  });

  it('takes one bare base64 key (openssl rand -base64 32) or a hand-written keyring without ids', () => {
    const key = randomBytes(32);
    writeFileSync(join(dir, 'bare'), `${key.toString('base64')}\n`);
    const bare = loadUnlockSeal(join(dir, 'bare'), { createIfMissing: false });
    expect(bare.keyIds()).toEqual([sealKeyIdOf(key)]);
    writeFileSync(join(dir, 'ring.json'), JSON.stringify({ version: 1, keys: [{ key: key.toString('base64') }] }));
    const ring = loadUnlockSeal(join(dir, 'ring.json'), { createIfMissing: false });
    expect(ring.open(bare.seal('pw', 'ad'), 'ad')).toBe('pw');
    expect(parseSealKeyring(key.toString('base64'), 'x')).toHaveLength(1);
  });
});

/** A store of sealed values in memory: rotation sees it exactly as it sees the database's. */
function memoryStore(values: SealedValue[]): SealedValueStore {
  return {
    what: 'test values',
    list: async () => values.map((v) => ({ ...v })),
    replace: async (_db, id, from, to) => {
      const value = values.find((v) => v.id === id);
      if (value && value.sealed === from) value.sealed = to;
    },
  };
}

describe('rotation', () => {
  it('makes a new key current, re-seals every value with it and drops the old key', async () => {
    const seal = newSeal();
    const [oldKey] = seal.keyIds();
    const values = ['n1', 'n2', 'n3'].map((id) => ({ id, associatedData: `auto-unlock/${id}`, sealed: seal.seal(`pw-${id}`, `auto-unlock/${id}`) }));
    const before = values.map((v) => v.sealed);
    const keys = new UnlockSealKeys({ db: {} as Database, seal, stores: [memoryStore(values)] });

    const result = await keys.rotate();
    expect(result).toEqual({ keyId: expect.stringMatching(/^usk_/), previousKeyIds: [oldKey], resealed: 3, unreadable: 0 });
    expect(result.keyId).not.toBe(oldKey);
    expect(seal.keyIds()).toEqual([result.keyId]);
    for (const [i, v] of values.entries()) {
      expect(v.sealed).not.toBe(before[i]);
      expect(seal.keyIdOf(v.sealed)).toBe(result.keyId);
      expect(seal.open(v.sealed, v.associatedData)).toBe(`pw-${v.id}`);
      // The old key is gone: what it sealed opens no more.
      expect(() => seal.open(before[i]!, v.associatedData)).toThrow(SealError);
    }
    expect(statSync(seal.path).mode & 0o777).toBe(0o600);
  });

  it('is seen by another process holding the same file, without a restart', async () => {
    const seal = newSeal();
    const running = new UnlockSeal(seal.path); // the service, while the CLI rotates
    const values = [{ id: 'n1', associatedData: 'ad', sealed: running.seal('pw', 'ad') }];
    await new UnlockSealKeys({ db: {} as Database, seal, stores: [memoryStore(values)] }).rotate();
    expect(running.open(values[0]!.sealed, 'ad')).toBe('pw');
    expect(running.keyIdOf(running.seal('pw', 'ad'))).toBe(seal.keyIds()[0]);
  });

  it('leaves values no key opens as they are, counting them', async () => {
    const seal = newSeal();
    const foreign = loadUnlockSeal(join(dir, 'foreign.json'), { createIfMissing: true }).seal('pw', 'ad');
    const values = [
      { id: 'lost', associatedData: 'ad', sealed: foreign },
      { id: 'ok', associatedData: 'ad', sealed: seal.seal('pw', 'ad') },
    ];
    const keys = new UnlockSealKeys({ db: {} as Database, seal, stores: [memoryStore(values)] });
    expect(await keys.countUnknownKeys()).toEqual({ count: 1, keyIds: [foreign.split('.')[1]] });
    expect(await keys.rotate()).toMatchObject({ resealed: 1, unreadable: 1 });
    expect(values[0]!.sealed).toBe(foreign);
  });

  it('reseal re-seals with the first key of a file the operator edited, changing no file', async () => {
    const seal = newSeal();
    const values = [{ id: 'n1', associatedData: 'ad', sealed: seal.seal('pw', 'ad') }];
    const oldRing = JSON.parse(readFileSync(seal.path, 'utf8'));
    const newKey = randomBytes(32).toString('base64');
    writeFileSync(seal.path, JSON.stringify({ version: 1, keys: [{ key: newKey }, ...oldRing.keys] }));
    const text = readFileSync(seal.path, 'utf8');
    const keys = new UnlockSealKeys({ db: {} as Database, seal, stores: [memoryStore(values)] });
    expect(await keys.reseal()).toEqual({ keyId: sealKeyIdOf(Buffer.from(newKey, 'base64')), resealed: 1, unreadable: 0 });
    expect(readFileSync(seal.path, 'utf8')).toBe(text);
    expect(await keys.reseal()).toMatchObject({ resealed: 0 });
    // Now the old key can go.
    writeFileSync(seal.path, JSON.stringify({ version: 1, keys: [{ key: newKey }] }));
    expect(seal.open(values[0]!.sealed, 'ad')).toBe('pw');
  });
});
