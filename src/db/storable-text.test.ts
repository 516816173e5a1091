import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonParam, storableParams, storableText, storableValue } from './storable-text.ts';

describe('storableText', () => {
  it('replaces U+0000 and lone surrogates with U+FFFD, one for one, and keeps everything else', () => {
    expect(storableText('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
    expect(storableText('x\uD800y')).toBe('x\uFFFDy');
    expect(storableText('x\uDC00')).toBe('x\uFFFD');
    expect(storableText('\uDC00\uD800')).toBe('\uFFFD\uFFFD');
    // A real pair (an emoji), control characters, a literal backslash-u sequence: untouched.
    for (const kept of ['😀', '\u0001\t\n', '\\u0000', 'plain', '']) expect(storableText(kept)).toBe(kept);
  });

  it('makes every string of a value storable, keys included, and JSON that jsonb accepts', () => {
    expect(storableValue({ 'k\u0000': ['\uD800', 1, null, { deep: 'n\u0000' }] })).toEqual({ 'k\uFFFD': ['\uFFFD', 1, null, { deep: 'n\uFFFD' }] });
    const date = new Date(0);
    expect(storableValue(date)).toBe(date);
    expect(jsonParam({ a: 'x\u0000' })).toBe('{"a":"x\uFFFD"}');
    expect(jsonParam({ a: 'x\uD800' })).not.toMatch(/\\u[dD]/);
    const clean = ['a', 1, null, date];
    expect(storableParams(clean)).toBe(clean);
    expect(storableParams(['a\u0000', [`b\uDFFF`]])).toEqual(['a\uFFFD', ['b\uFFFD']]);
  });

  it('is the only way src/db serialises JSON for a statement', () => {
    const dir = import.meta.dirname;
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'storable-text.ts' && f !== 'data-dir-lock.ts')
      .filter((f) => readFileSync(join(dir, f), 'utf8').includes('JSON.stringify('));
    expect(offenders, 'use jsonParam: JSON.stringify keeps "\\u0000", which jsonb refuses').toEqual([]);
  });
});
