import { describe, expect, it } from 'vitest';
import { isNewLine, parseTimedLine, resumeSinceTime, storedLine } from './line-time.ts';

describe('pod log line times', () => {
  it('writes every time with nine fraction digits, so text order is time order', () => {
    const a = parseTimedLine('2026-01-02T03:04:05.1Z first')!;
    const b = parseTimedLine('2026-01-02T03:04:05.12Z second')!;
    const c = parseTimedLine('2026-01-02T03:04:05Z zeroth')!;
    expect(a.time).toBe('2026-01-02T03:04:05.100000000Z');
    expect(b.time).toBe('2026-01-02T03:04:05.120000000Z');
    expect(c.time).toBe('2026-01-02T03:04:05.000000000Z');
    expect([b.time, a.time, c.time].sort()).toEqual([c.time, a.time, b.time]);
    expect(a.at.toISOString()).toBe('2026-01-02T03:04:05.100Z');
    expect(a.text).toBe('first');
  });

  it('keeps the line as printed, spaces and all, and refuses lines without the kubelet time', () => {
    expect(parseTimedLine('2026-01-02T03:04:05.123456789Z  two  spaces ')!.text).toBe(' two  spaces ');
    expect(parseTimedLine('unable to retrieve container logs for containerd://abc')).toBeUndefined();
    expect(parseTimedLine('2026-01-02T03:04:05.123Z')).toBeUndefined();
  });

  it('resumes from the whole second of the last stored line and drops what was stored', () => {
    const through = '2026-01-02T03:04:05.500000000Z';
    expect(resumeSinceTime(through)).toBe('2026-01-02T03:04:05Z');
    expect(resumeSinceTime(null)).toBeUndefined();
    const replay = ['2026-01-02T03:04:05.2Z old', '2026-01-02T03:04:05.5Z last stored', '2026-01-02T03:04:05.500000001Z new', '2026-01-02T03:04:06Z newer'];
    const kept = replay.map((raw) => parseTimedLine(raw)!).filter((l) => isNewLine(l.time, through));
    expect(kept.map((l) => l.text)).toEqual(['new', 'newer']);
    expect(isNewLine('2026-01-02T03:04:05.000000000Z', null)).toBe(true);
  });

  it('stores lines in the process runtime format, cut to the line limit', () => {
    const line = parseTimedLine('2026-01-02T03:04:05.123456789Z hello world')!;
    expect(storedLine(line, 64)).toBe('2026-01-02T03:04:05.123Z stdout hello world\n');
    expect(storedLine(line, 5)).toBe('2026-01-02T03:04:05.123Z stdout hello\n');
  });
});
