// Whether a pid names a live process. A zombie (exited, not yet reaped; common in containers whose
// init does not reap orphans) counts as dead: it holds no ports and no files.
import { readFileSync } from 'node:fs';

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; comm may contain spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
