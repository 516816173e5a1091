// Human-readable output of operator commands (with --json the CLI prints the object itself).
export function printHuman(result: object) {
  for (const [key, value] of Object.entries(result)) {
    if (Array.isArray(value)) {
      console.log(`${key}:`);
      for (const item of value) console.log(`  ${typeof item === 'object' ? formatLine(item) : String(item)}`);
    } else {
      console.log(`${key}: ${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}`);
    }
  }
}

const formatLine = (o: Record<string, unknown>) =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${v ?? '-'}`)
    .join('  ');
