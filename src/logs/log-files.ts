// Where a node's daemon output lives: the current file `daemon.log` and rotated files
// `daemon.log.000001`, `daemon.log.000002`, ... (higher is newer). A rotated file keeps its name
// until retention deletes it, so a reader that listed the files never sees one change under it.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const CURRENT_LOG = 'daemon.log';
const ROTATED = /^daemon\.log\.(\d{6,})$/;

export const currentLogPath = (dir: string) => join(dir, CURRENT_LOG);
export const rotatedLogName = (seq: number) => `${CURRENT_LOG}.${String(seq).padStart(6, '0')}`;

/** Rotated files of a node's log directory, oldest first. */
export function listRotatedLogs(dir: string): Array<{ seq: number; path: string }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, m: ROTATED.exec(name) }))
    .filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null)
    .map(({ name, m }) => ({ seq: Number(m[1]), path: join(dir, name) }))
    .sort((a, b) => a.seq - b.seq);
}

/** Every log file of a node in time order: rotated ones oldest first, then the current one. */
export function listLogFiles(dir: string): string[] {
  return [...listRotatedLogs(dir).map((f) => f.path), currentLogPath(dir)];
}
