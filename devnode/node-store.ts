// The unlocked node's own state on disk, key by key: `<storage_dir>/devnode-kv/<key>`. It stands in
// for what LDK persists in RLN (the channel manager, monitors...); devnode's only such state is
// the wallet's next receive address index, kept under MANAGER_KEY. Each key is written atomically
// (temporary file, fsync, rename), so a crash leaves the old value or the new one.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const NODE_STORE_DIR = 'devnode-kv';
/** The key whose absence means "no local node state" (RLN: no channel manager), which triggers a VSS restore. */
export const MANAGER_KEY = 'manager';

export class LocalNodeStore {
  readonly dir: string;

  constructor(storageDir: string) {
    this.dir = join(storageDir, NODE_STORE_DIR);
  }

  read(key: string): Buffer | undefined {
    try {
      return readFileSync(this.fileOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  write(key: string, value: Buffer): void {
    mkdirSync(this.dir, { recursive: true });
    const path = this.fileOf(key);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeSync(fd, value);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }

  keys(): string[] {
    try {
      return readdirSync(this.dir).filter((f) => !f.endsWith('.tmp')).map((f) => decodeURIComponent(f));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  // Keys may hold "/" (LDK's primary/secondary/key): one file name each, reversibly.
  private fileOf(key: string): string {
    return join(this.dir, encodeURIComponent(key));
  }
}
