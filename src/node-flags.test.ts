// The V8 flags that keep the service small (docs/OPERATIONS.md, "Footprint: memory and start-up") are given on three command lines:
// `npm start`, the container's entrypoint (the Dockerfile's and the test cluster's image) and the CLI's
// launcher. They must not drift apart.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const MEMORY_FLAGS = ['--liftoff-only', '--max-semi-space-size=4'];

describe('the service runs with the same V8 flags everywhere', () => {
  it('npm start', () => {
    const start: string = JSON.parse(read('package.json')).scripts.start;
    expect(start.split(' ')).toEqual(expect.arrayContaining(MEMORY_FLAGS));
  });
  it("the container's entrypoint", () => {
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(read('Dockerfile'))![1]!) as string[];
    expect(entrypoint).toEqual(expect.arrayContaining(MEMORY_FLAGS));
  });
  it("the test cluster's service image (scripts/service-image.sh)", () => {
    const entrypoint = JSON.parse(/Entrypoint: (\[.*\]),/.exec(read('scripts/service-image.sh'))![1]!) as string[];
    expect(entrypoint).toEqual(expect.arrayContaining(MEMORY_FLAGS));
  });
  it("the CLI's launcher", () => {
    const shebang = read('bin/rln-cloud.mjs').split('\n')[0]!;
    expect(shebang.split(' ')).toEqual(expect.arrayContaining(MEMORY_FLAGS));
  });
});
