// The typed client examples of docs/API.md ("Typed client") are the files in client/examples/,
// which `tsc --noEmit` type-checks against the generated types: an example that no longer compiles
// fails `npm test` there, and this test keeps the guide's copies equal to them.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/platform/paths.ts';

const EXAMPLE_BLOCK = /```ts\n(\/\/ (client\/examples\/[\w-]+\.ts)[^\n]*\n[\s\S]*?)```/g;

describe("the typed client examples of docs/API.md", () => {
  it('are the files in client/examples/, every one of them, unchanged', () => {
    const guide = readFileSync(projectPath('docs', 'API.md'), 'utf8');
    const blocks = new Map([...guide.matchAll(EXAMPLE_BLOCK)].map((m) => [m[2]!, m[1]!]));
    const files = readdirSync(projectPath('client', 'examples')).map((name) => `client/examples/${name}`).sort();
    expect([...blocks.keys()].sort()).toEqual(files);
    for (const file of files) {
      expect(blocks.get(file), `the guide's copy of ${file} differs from the file`).toBe(readFileSync(projectPath(file), 'utf8'));
    }
  });
});
