// The last bytes of a node's current log file: what a failed build quotes so its error says why.
import { open, stat } from 'node:fs/promises';
import { currentLogPath } from './log-files.ts';

export async function tailLogFile(dir: string, maxBytes = 2048): Promise<string> {
  try {
    const path = currentLogPath(dir);
    const { size } = await stat(path);
    const fh = await open(path, 'r');
    try {
      const length = Math.min(size, maxBytes);
      const buf = Buffer.alloc(length);
      await fh.read(buf, 0, length, size - length);
      return buf.toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return '';
  }
}
