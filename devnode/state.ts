// The wallet state devnode keeps on disk: `<storage_dir>/devnode-state.json`. Only whether the node
// is initialized and the password-sealed mnemonic are stored; being unlocked is memory only, so
// every process start (and every upgrade) comes back locked, as RLN does.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { SealedMnemonic } from './wallet-crypto.ts';

export const STATE_FILE_NAME = 'devnode-state.json';

export type PersistedState =
  | { version: 1; initialized: false }
  | ({ version: 1; initialized: true } & SealedMnemonic);

/** The state file exists but cannot be used; devnode refuses to start rather than re-initialize. */
export class StateFileError extends Error {}

export class StateFile {
  readonly path: string;

  private constructor(readonly storageDir: string) {
    this.path = join(storageDir, STATE_FILE_NAME);
  }

  /** Creates the storage directory if needed, like RLN does with its storage_dir. */
  static open(storageDir: string): StateFile {
    mkdirSync(storageDir, { recursive: true });
    return new StateFile(storageDir);
  }

  load(): PersistedState {
    let raw: string;
    try {
      raw = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, initialized: false };
      throw new StateFileError(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new StateFileError(`${this.path} is not valid JSON`);
    }
    // A damaged file must not read as "not initialized": that would let anyone init a new wallet
    // over the old one.
    if (!isPersistedState(parsed)) throw new StateFileError(`${this.path} does not hold a devnode wallet state`);
    return parsed;
  }

  save(state: PersistedState): void {
    // Temporary file, fsync, then rename: a crash leaves either the old or the new state, never half
    // a file, and the wallet survives a power loss right after init answered.
    const tmp = `${this.path}.${process.pid}.tmp`;
    try {
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeSync(fd, JSON.stringify(state, null, 2) + '\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }
}

const isHex = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && /^[0-9a-f]+$/.test(v);

function isPersistedState(v: unknown): v is PersistedState {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  if (s.version !== 1) return false;
  if (s.initialized === false) return true;
  if (s.initialized !== true) return false;
  const m = s.mnemonic as Record<string, unknown> | null | undefined;
  return isHex(s.passwordSalt) && isHex(s.passwordHash) && typeof m === 'object' && m !== null &&
    isHex(m.iv) && isHex(m.tag) && isHex(m.ciphertext);
}
