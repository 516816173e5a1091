import { describe, expect, it } from 'vitest';
import { canonicalJson } from './idempotency-key.ts';

describe('canonicalJson', () => {
  it('does not depend on the order of object keys, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'z' } })).toBe(canonicalJson({ a: { c: 'z', d: [1, { x: 1, y: 2 }] }, b: 1 }));
  });

  it('keeps array order and tells values apart', () => {
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
  });

  it('ignores undefined members like JSON does', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });
});
