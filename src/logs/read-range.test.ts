import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLogRange } from './read-range.ts';
import { rotatedLogName } from './log-files.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const ts = (minute: number) => `2026-01-02T03:${String(minute).padStart(2, '0')}:00.000Z`;
const line = (minute: number) => `${ts(minute)} stdout minute ${minute}\n`;

/** Three files: minutes 0-9, 10-19 (rotated) and 20-29 (current), each modified at its last line. */
function logDir() {
  const dir = mkdtempSync(join(tmpdir(), 'rln-range-'));
  dirs.push(dir);
  const files = [rotatedLogName(1), rotatedLogName(2), 'daemon.log'];
  files.forEach((name, f) => {
    let text = '';
    for (let m = f * 10; m < f * 10 + 10; m++) text += line(m);
    writeFileSync(join(dir, name), text);
    const modified = new Date(ts(f * 10 + 9));
    utimesSync(join(dir, name), modified, modified);
  });
  return dir;
}

async function read(dir: string, range: { from?: string; to?: string }) {
  const chunks: Buffer[] = [];
  for await (const c of readLogRange(dir, { from: range.from ? new Date(range.from) : undefined, to: range.to ? new Date(range.to) : undefined })) chunks.push(c);
  return [...Buffer.concat(chunks).toString().matchAll(/minute (\d+)/g)].map((m) => Number(m[1]));
}

const minutes = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('readLogRange', () => {
  it('reads every file in time order without a range', async () => {
    expect(await read(logDir(), {})).toEqual(minutes(0, 30));
  });

  it('selects [from, to) across file boundaries', async () => {
    const dir = logDir();
    expect(await read(dir, { from: ts(5), to: ts(25) })).toEqual(minutes(5, 25));
    expect(await read(dir, { from: ts(10), to: ts(20) })).toEqual(minutes(10, 20));
    expect(await read(dir, { from: ts(12) })).toEqual(minutes(12, 30));
    expect(await read(dir, { to: ts(3) })).toEqual(minutes(0, 3));
    expect(await read(dir, { from: '2026-01-02T03:09:30.000Z', to: '2026-01-02T03:10:30.000Z' })).toEqual([10]);
  });

  it('answers nothing for a range outside the logs, and for a node without logs', async () => {
    const dir = logDir();
    expect(await read(dir, { from: '2027-01-01T00:00:00Z' })).toEqual([]);
    expect(await read(dir, { to: '2025-01-01T00:00:00Z' })).toEqual([]);
    expect(await read(join(dir, 'missing'), {})).toEqual([]);
  });

  it('keeps a line without a timestamp with the line before it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rln-range-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'daemon.log'), `${line(1)}continued minute 1\n${line(2)}continued minute 2\n${line(3)}`);
    utimesSync(join(dir, 'daemon.log'), new Date(ts(3)), new Date(ts(3)));
    expect(await read(dir, { from: ts(2), to: ts(3) })).toEqual([2, 2]);
  });
});
