// Log lines for a person at a terminal: pino writes JSON (what log collectors want), and on a TTY
// each line is turned into `12:04:05 INFO  [gateway] message key=value ...` instead. Errors keep
// their stack. Anything that is not a JSON line passes through unchanged.
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
// Fields every line has, or that are shown in their own place.
const SHOWN_APART = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'part', 'err']);

export function formatLogLine(line: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = Number(entry.level);
  const time = new Date(Number(entry.time) || Date.now()).toTimeString().slice(0, 8);
  const label = (LEVELS[level] ?? String(entry.level)).padEnd(5);
  const shownLevel = colour ? `\x1b[${COLOURS[level] ?? '0'}m${label}\x1b[0m` : label;
  const part = typeof entry.part === 'string' ? `[${entry.part}] ` : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !SHOWN_APART.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  let out = `${time} ${shownLevel} ${part}${String(entry.msg ?? '')}${fields.length ? `  ${fields.join(' ')}` : ''}`;
  const err = entry.err as { message?: string; stack?: string } | undefined;
  if (err) out += `\n    ${(err.stack ?? err.message ?? JSON.stringify(err)).split('\n').join('\n    ')}`;
  return out;
}

/** A pino destination that writes formatted lines to `out` (a TTY). */
export function prettyDestination(out: NodeJS.WriteStream) {
  const colour = out.hasColors?.() ?? false;
  let partial = '';
  return {
    write(chunk: string) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line) out.write(`${formatLogLine(line, colour)}\n`);
    },
  };
}
