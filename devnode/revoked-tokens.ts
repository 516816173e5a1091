// The revocation identifiers POST /revoketoken has collected, kept as RLN keeps them:
// `<storage_dir>/revoked_tokens.txt`, one lowercase hex identifier a line, rewritten whole through a
// synced temporary file and a rename so a crash leaves the old list or the new one. Read at start; a
// line that is not hex stops devnode from starting, as RLN refuses to start on a damaged list.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const REVOKED_TOKENS_FILE = 'revoked_tokens.txt';

export class RevokedTokensError extends Error {}

export class RevokedTokens {
  private readonly path: string;
  private readonly ids: Set<string>;

  private constructor(storageDir: string, ids: Set<string>) {
    this.path = join(storageDir, REVOKED_TOKENS_FILE);
    this.ids = ids;
  }

  static load(storageDir: string): RevokedTokens {
    const path = join(storageDir, REVOKED_TOKENS_FILE);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new RevokedTokens(storageDir, new Set());
      throw new RevokedTokensError(`cannot read ${path}: ${(err as Error).message}`);
    }
    const ids = new Set<string>();
    text.split('\n').forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(line)) throw new RevokedTokensError(`${path}:${index + 1} is not a hex revocation identifier`);
      ids.add(line.toLowerCase());
    });
    return new RevokedTokens(storageDir, ids);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Whether any of a token's identifiers (one per block) was revoked. */
  anyRevoked(ids: readonly string[]): boolean {
    return ids.some((id) => this.ids.has(id.toLowerCase()));
  }

  /** Adds a token's identifiers and writes the whole list before returning. */
  add(ids: readonly string[]): void {
    for (const id of ids) this.ids.add(id.toLowerCase());
    const tmp = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, [...this.ids].map((id) => `${id}\n`).join(''));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }
}
