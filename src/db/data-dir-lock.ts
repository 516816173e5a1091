// Embedded PGlite may be opened by one process at a time. Whoever opens DATA_DIR's database (the
// server, or the CLI when no server runs) holds this lock file; a lock left by a dead process is
// taken over.
import { openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '../platform/process-alive.ts';

export interface LockHolder {
  pid: number;
  role: 'server' | 'cli';
}

export type LockResult = { acquired: true; release: () => void } | { acquired: false; holder: LockHolder };

export function lockPath(dataDir: string) {
  return join(dataDir, 'rln-cloud.lock');
}

export function readLockHolder(dataDir: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(lockPath(dataDir), 'utf8')) as LockHolder;
    return isProcessAlive(holder.pid) ? holder : undefined;
  } catch {
    return undefined;
  }
}

export function acquireDataDirLock(dataDir: string, role: LockHolder['role']): LockResult {
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, role } satisfies LockHolder));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (readLockHolderRaw(path)?.pid === process.pid) rmSync(path, { force: true });
      };
      process.once('exit', release);
      return { acquired: true, release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readLockHolderRaw(path);
      if (holder && isProcessAlive(holder.pid) && holder.pid !== process.pid) return { acquired: false, holder };
      if (!holder && attempt < 2) {
        // Another process may have created the file and not yet written it: look again shortly.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
        continue;
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not take the lock ${path}`);
}

function readLockHolderRaw(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}
