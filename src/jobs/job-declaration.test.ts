import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { declareJob } from './job-declaration.ts';

const EXAMPLE_JOB = declareJob({
  kind: 'example.job',
  maxAttempts: 4,
  payload: Type.Object({ v: Type.Literal(1), itemId: Type.String(), n: Type.Number() }),
  singletonKey: (p) => `example:${p.itemId}`,
});

describe('declareJob', () => {
  it('enqueues a payload with its kind, attempts and singleton key', () => {
    expect(EXAMPLE_JOB.newJob({ v: 1, itemId: 'a', n: 2 })).toEqual({
      kind: 'example.job',
      payload: { v: 1, itemId: 'a', n: 2 },
      singletonKey: 'example:a',
      maxAttempts: 4,
    });
  });

  it('parses a stored payload of its version', () => {
    expect(EXAMPLE_JOB.parse({ v: 1, itemId: 'a', n: 2 })).toEqual({ v: 1, itemId: 'a', n: 2 });
  });

  it.each([
    ['another version', { v: 2, itemId: 'a', n: 2 }],
    ['a missing field', { v: 1, itemId: 'a' }],
    ['a field of the wrong type', { v: 1, itemId: 7, n: 2 }],
    ['no object at all', null],
  ])('refuses %s, naming the job kind', (_case, payload) => {
    expect(() => EXAMPLE_JOB.parse(payload)).toThrow(`unsupported example.job job payload ${JSON.stringify(payload)}`);
  });
});
