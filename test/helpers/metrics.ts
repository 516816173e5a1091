// Reading Prometheus' text format the way a scraper does: samples by series, and each family's
// declared type, so tests can assert by how much a series moved.

export interface Scrape {
  /** Sample value by series key: `name{a="x",b="y"}` with labels sorted, or `name` without labels. */
  samples: Map<string, number>;
  /** Declared type (counter, gauge, histogram, summary) by family name. */
  types: Map<string, string>;
  /** Every label name used by each family's samples. */
  labelNames: Map<string, Set<string>>;
}

export const series = (name: string, labels: Record<string, string> = {}) => {
  const keys = Object.keys(labels).sort();
  return keys.length === 0 ? name : `${name}{${keys.map((k) => `${k}="${labels[k]}"`).join(',')}}`;
};

/** The family a sample belongs to: histogram samples end in _bucket, _sum, _count. */
function familyOf(name: string, types: Map<string, string>): string {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.has(base) ? base : name;
}

export function parseExposition(text: string): Scrape {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  const labelNames = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      types.set(name!, type!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.set(series(m[1]!, labels), Number(m[3]));
    const family = familyOf(m[1]!, types);
    const names = labelNames.get(family) ?? new Set<string>();
    for (const k of Object.keys(labels)) if (k !== 'le' && k !== 'quantile') names.add(k);
    labelNames.set(family, names);
  }
  return { samples, types, labelNames };
}

/**
 * How every series whose name is one of `names` moved from `before` to `after` (a series absent
 * before counts from 0), keeping only those that moved.
 */
export function movements(before: Scrape, after: Scrape, names: string[]): Record<string, number> {
  const moved: Record<string, number> = {};
  for (const [key, value] of after.samples) {
    const name = key.split('{')[0]!;
    if (!names.includes(name)) continue;
    const delta = value - (before.samples.get(key) ?? 0);
    if (delta !== 0) moved[key] = delta;
  }
  return moved;
}
