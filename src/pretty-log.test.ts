import { describe, expect, it } from 'vitest';
import { formatLogLine } from './pretty-log.ts';

describe('readable log lines', () => {
  const at = new Date(2026, 10, 23, 12, 4, 5).getTime();

  it('shows time, level, part, message and the other fields', () => {
    const line = JSON.stringify({ level: 30, time: at, pid: 1, hostname: 'h', name: 'rln-cloud', part: 'gateway', msg: 'serving', replica: 'h/1/ab', port: 8081 });
    expect(formatLogLine(line, false)).toBe('12:04:05 INFO  [gateway] serving  replica=h/1/ab port=8081');
  });

  it('keeps an error stack, colours the level on a colour terminal, and passes other text through', () => {
    const line = JSON.stringify({ level: 50, time: at, msg: 'build failed', err: { message: 'boom', stack: 'Error: boom\n    at x' } });
    expect(formatLogLine(line, false)).toBe('12:04:05 ERROR build failed\n    Error: boom\n        at x');
    expect(formatLogLine(line, true)).toContain('\x1b[31mERROR\x1b[0m');
    expect(formatLogLine('not json', false)).toBe('not json');
  });
});
