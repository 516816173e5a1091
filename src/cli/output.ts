// Human-readable output of operator commands (with --json the CLI prints the object itself):
// `key: value` lines, nested objects indented beneath their key, lists one item per line (a list
// of objects as `key=value` pairs, nested values in brief).

/** The lines printHuman writes, for tests. */
export function formatHuman(result: object, indent = ''): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(result)) {
    if (Array.isArray(value)) {
      lines.push(`${indent}${key}:${value.length === 0 ? ' (none)' : ''}`);
      for (const item of value) lines.push(`${indent}  ${item !== null && typeof item === 'object' ? formatLine(item as Record<string, unknown>) : String(item)}`);
    } else if (value !== null && typeof value === 'object') {
      lines.push(`${indent}${key}:`, ...formatHuman(value, `${indent}  `));
    } else {
      lines.push(`${indent}${key}: ${value ?? '-'}`);
    }
  }
  return lines;
}

export function printHuman(result: object) {
  for (const line of formatHuman(result)) console.log(line);
}

const brief = (v: unknown): string =>
  v === null || v === undefined ? '-'
  : Array.isArray(v) ? `[${v.map(brief).join(', ')}]`
  : typeof v === 'object' ? `{${Object.entries(v).map(([k, x]) => `${k}=${brief(x)}`).join(', ')}}`
  : String(v);

const formatLine = (o: Record<string, unknown>) =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${brief(v)}`)
    .join('  ');
