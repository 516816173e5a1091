// The typed client's generated files (client/openapi.json, client/src/schema.ts) are what the route
// schemas give now. When a route changes and this fails, run `npm run client:generate` and commit
// both files.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATE_COMMAND, renderClientFiles } from '../../src/composition/client-files.ts';
import { projectPath } from '../../src/platform/paths.ts';

function committed(path: string): string | undefined {
  try {
    return readFileSync(projectPath(path), 'utf8');
  } catch {
    return undefined;
  }
}

/** Where two texts first differ, as a line a reader can find. */
function firstDifference(expected: string, actual: string): string {
  const [a, b] = [expected.split('\n'), actual.split('\n')];
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(b[at] ?? '(end of file)')}, generated ${JSON.stringify(a[at] ?? '(end of file)')}`;
}

describe("the typed client's generated files", () => {
  it('are up to date with the route schemas', async () => {
    const stale: string[] = [];
    for (const { path, text } of await renderClientFiles()) {
      const current = committed(path);
      if (current === undefined) stale.push(`${path} is missing`);
      else if (current !== text) stale.push(`${path} is stale (${firstDifference(text, current)})`);
    }
    expect(stale, `${stale.join('; ')}. Run \`${GENERATE_COMMAND}\` and commit the files.`).toEqual([]);
  });

  it('come out the same on every run: no timestamps, nothing of the machine or its environment', async () => {
    const first = await renderClientFiles();
    const elsewhere = { PUBLIC_URL: 'https://elsewhere.example', API_PORT: '9999', TZ: 'Pacific/Kiritimati' };
    const saved = Object.fromEntries(Object.keys(elsewhere).map((name) => [name, process.env[name]]));
    try {
      Object.assign(process.env, elsewhere);
      expect(await renderClientFiles()).toEqual(first);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
