// The kinds of value environment variables hold. Each turns text into a value and checks it
// with a TypeBox schema; area-specific kinds (Kubernetes quantities, retry schedules) are built
// with `format` beside the variables that use them.
import { Type, type TSchema } from '@sinclair/typebox';
import type { EnvFormat } from './variable.ts';

export function format<T>(schema: TSchema, must: string, read: (text: string) => T | undefined): EnvFormat<T> {
  return { schema, must, read };
}

/** Free text: names, paths, hosts, passwords. */
export const text = (): EnvFormat<string> => format(Type.String(), 'be text', (t) => t);

export const matching = (pattern: RegExp, must: string): EnvFormat<string> =>
  format(Type.String({ pattern: pattern.source }), must, (t) => t);

/** Only `true` and `false`: one spelling, so `1`, `yes` or `TRUE` cannot mean different things in different places. */
export const boolean = (): EnvFormat<boolean> =>
  format(Type.Boolean(), 'be true or false (exactly, in lowercase)', (t) => (t === 'true' ? true : t === 'false' ? false : undefined));

/** Digits only: "1e3", "0x10", "8080.0" and "-1" are refused rather than guessed at. */
export function integer(min: number, max?: number, must?: string): EnvFormat<number> {
  const range =
    max !== undefined ? `an integer between ${min} and ${max}` : min === 1 ? 'a positive integer' : min === 0 ? 'a whole number (0 or more)' : `an integer of at least ${min}`;
  return format(Type.Integer({ minimum: min, ...(max !== undefined && { maximum: max }) }), must ?? `be ${range}`, (t) =>
    /^\d+$/.test(t) ? Number(t) : undefined,
  );
}

/** Parses "0", "250ms", "5s", "5m", "2h" into milliseconds; undefined when malformed. */
export function parseDurationMs(text: string): number | undefined {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms']!;
  return Number(m[1]) * unit;
}

/** A duration in milliseconds, written with its unit (15s, 500ms, 24h). */
export const duration = (minMs: number): EnvFormat<number> =>
  format(Type.Integer({ minimum: minMs }), `be a duration of at least ${minMs} ms (e.g. 15s, 500ms, 24h)`, parseDurationMs);

export const port = (): EnvFormat<number> => integer(1, 65535, 'be a TCP port between 1 and 65535');

export function oneOf<const T extends string>(values: readonly T[]): EnvFormat<T> {
  const quoted = values.map((v) => `"${v}"`);
  const words = quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : quoted.join('');
  return format(Type.Union(values.map((v) => Type.Literal(v))), `be ${words}`, (t) => t as T);
}

/** An absolute URL with one of `schemes` (e.g. "https:"); trailing slashes are dropped so paths can be appended. */
export function url(schemes: string[]): EnvFormat<string> {
  const must = `be an absolute ${schemes.join(' or ')} URL`;
  return format(Type.String(), must, (t) => {
    try {
      return schemes.includes(new URL(t).protocol) ? t.replace(/\/+$/, '') : undefined;
    } catch {
      return undefined;
    }
  });
}

/** Comma-separated items, blanks around them ignored; each item must match `item`. */
export const commaList = (item: RegExp, must: string): EnvFormat<string[]> =>
  format(Type.Array(Type.String({ pattern: item.source })), must, (t) =>
    t
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  );

/** A JSON document checked against `schema`. */
export const json = <T>(schema: TSchema, must: string): EnvFormat<T> =>
  format(schema, must, (t) => {
    try {
      return JSON.parse(t) as T;
    } catch {
      return undefined;
    }
  });
