import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { RotatingLog } from './rotating-log.ts';
import { listLogFiles } from './log-files.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'rln-rotlog-'));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const at = (iso: string) => () => new Date(iso);

describe('RotatingLog', () => {
  it('prefixes every complete line with the receipt time and stream, holding partial lines back', () => {
    const dir = tempDir();
    const log = new RotatingLog(dir, { maxFileBytes: 1 << 20, maxFiles: 2 }, at('2026-01-02T03:04:05.678Z'));
    log.write('stdout', Buffer.from('one\ntw'));
    log.write('stderr', Buffer.from('err\n'));
    log.write('stdout', Buffer.from('o\n'));
    log.flushPartial('stdout');
    log.close();
    expect(readFileSync(join(dir, 'daemon.log'), 'utf8')).toBe(
      '2026-01-02T03:04:05.678Z stdout one\n2026-01-02T03:04:05.678Z stderr err\n2026-01-02T03:04:05.678Z stdout two\n',
    );
  });

  it('rotates at maxFileBytes and keeps only maxFiles rotated files, newest last', () => {
    const dir = tempDir();
    const log = new RotatingLog(dir, { maxFileBytes: 4096, maxFiles: 2 }, at('2026-01-02T03:04:05.678Z'));
    for (let i = 0; i < 400; i++) log.write('stdout', Buffer.from(`line ${String(i).padStart(4, '0')} ${'x'.repeat(40)}\n`));
    log.close();
    const names = readdirSync(dir).sort();
    expect(names.filter((n) => n.startsWith('daemon.log.'))).toHaveLength(2);
    const files = listLogFiles(dir);
    const text = files.map((f) => readFileSync(f, 'utf8')).join('');
    // What is kept is the newest output, contiguous, ending with the last line.
    expect(text.trimEnd().endsWith(`line 0399 ${'x'.repeat(40)}`)).toBe(true);
    const numbers = [...text.matchAll(/line (\d{4})/g)].map((m) => Number(m[1]));
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    for (const f of files.slice(0, -1)) expect(readFileSync(f).length).toBeGreaterThanOrEqual(4096);
  });

  it('splits an endless line so memory stays bounded, and closes when followed streams close', async () => {
    const dir = tempDir();
    const log = new RotatingLog(dir, { maxFileBytes: 1 << 30, maxFiles: 1 });
    const out = new PassThrough();
    log.follow(out, 'stdout');
    out.write(Buffer.alloc(70 * 1024, 'a'));
    out.end('tail-without-newline');
    await new Promise((r) => out.once('close', r));
    const lines = readFileSync(join(dir, 'daemon.log'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/ stdout tail-without-newline$/);
  });

  it('drops output instead of throwing when its directory is gone', () => {
    const dir = tempDir();
    const log = new RotatingLog(dir);
    log.write('stdout', Buffer.from('a\n'));
    rmSync(dir, { recursive: true, force: true });
    expect(() => log.write('stdout', Buffer.from('b\n'))).not.toThrow();
  });
});
