// Where the project's own files are, wherever this code runs from: the TypeScript sources through
// tsx, or the bundle `npm start` builds into dist/. Both sit below the directory holding
// package.json, so every path is taken from there.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));
export const projectPath = (...parts: string[]) => join(PROJECT_ROOT, ...parts);
