import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { writeGzipParts } from './gzip-parts.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

async function* chunksOf(text: string, size: number) {
  for (let i = 0; i < text.length; i += size) yield Buffer.from(text.slice(i, i + size));
}

// Pseudo-random text compresses poorly enough to produce output early.
function logText(lines: number) {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31).toString(36).slice(2, 12);
  return Array.from({ length: lines }, (_, i) => `line ${i} ${rnd()} ${rnd()} ${rnd()}\n`).join('');
}

describe('writeGzipParts', () => {
  it('splits into standalone gzip parts at line ends that give back the input in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rln-gz-'));
    dirs.push(dir);
    const text = logText(40_000);
    const parts: Array<{ index: number; bytes: number; content: Buffer }> = [];
    const result = await writeGzipParts(chunksOf(text, 10_000), {
      partBytes: 64 * 1024,
      dir,
      async onPart({ index, path, bytes }) {
        parts.push({ index, bytes, content: readFileSync(path) });
      },
    });
    expect(result.parts).toBeGreaterThan(3);
    expect(parts.map((p) => p.index)).toEqual(parts.map((_, i) => i + 1));
    const decoded = parts.map((p) => gunzipSync(p.content).toString());
    for (const d of decoded) expect(d.endsWith('\n')).toBe(true);
    expect(decoded.join('')).toBe(text);
    expect(gunzipSync(Buffer.concat(parts.map((p) => p.content))).toString()).toBe(text);
    expect(result.inputBytes).toBe(Buffer.byteLength(text));
    for (const p of parts) expect(p.bytes).toBe(p.content.length);
    // A part ends at the first line end after reaching partBytes: zlib's buffer is the only slack.
    for (const p of parts.slice(0, -1)) expect(p.bytes).toBeLessThan(64 * 1024 + 64 * 1024);
  });

  it('writes a single part for small input and for empty input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rln-gz-'));
    dirs.push(dir);
    const seen: string[] = [];
    const onPart = async ({ path }: { path: string }) => void seen.push(gunzipSync(readFileSync(path)).toString());
    expect((await writeGzipParts(chunksOf('a\nb\n', 1), { partBytes: 1024, dir, onPart })).parts).toBe(1);
    expect((await writeGzipParts(chunksOf('', 1), { partBytes: 1024, dir, onPart })).parts).toBe(1);
    expect(seen).toEqual(['a\nb\n', '']);
  });
});
