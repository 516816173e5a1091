// The body of a webhook must survive the original service's receivers, whose documented handler
// verifies X-ThunderStack-Signature over JSON.stringify of the parsed body when it lacks the raw
// one: so JSON.stringify(JSON.parse(body)) === body for every body we send.
import { describe, expect, it } from 'vitest';
import { serializeEnvelope } from './envelope.ts';

const roundTrips = (body: string) => JSON.stringify(JSON.parse(body)) === body;

describe('serializeEnvelope', () => {
  it('is a fixed point of JSON.parse then JSON.stringify, for awkward payloads too', () => {
    const payloads: Record<string, unknown>[] = [
      { eventType: 'NODE_STATUS_UPDATED', eventTimestamp: '2026-01-01T00:00:00.000Z', nodeId: 'ab', details: { status: 'RUNNING', nodeId: 'ab' } },
      // Keys reordered as jsonb returns them, integer-like keys (which objects put first), extra fields.
      { details: { '10': 1, '2': 2, z: null, a: [] }, nodeId: 'n', eventType: 'TEST', extra: { b: 1, a: 2 }, eventTimestamp: 't' },
      // Numbers JSON writes in exponent form, negative zero, fractions.
      { eventType: 'X', eventTimestamp: 't', nodeId: 'n', details: { nodeId: 'n', big: 1e21, small: 1e-7, negZero: -0, frac: 0.1 + 0.2, max: Number.MAX_SAFE_INTEGER } },
      // Non-ASCII, escapes, a lone surrogate (escaped by JSON.stringify), characters \u2028 and \u2029.
      { eventType: 'X', eventTimestamp: 't', nodeId: 'n', details: { nodeId: 'n', text: 'caf\u00e9 \ud83d\ude00 "q" \\ \n\t \u0000 \ud800 \u2028\u2029 </script>' } },
      // Fields without a value are left out, as JSON.stringify leaves them.
      { eventType: 'X', eventTimestamp: 't', nodeId: 'n', details: { nodeId: 'n', gone: undefined }, also: undefined },
      { eventType: 'X', eventTimestamp: 't', nodeId: 'n', details: null },
      { eventType: 'X', eventTimestamp: 't', nodeId: 'n', details: { nodeId: 'n', nested: { deep: [{ a: [1, { b: 'c' }] }] } } },
    ];
    for (const payload of payloads) {
      const body = serializeEnvelope(payload);
      expect(roundTrips(body), body).toBe(true);
      // The same event yields the same body however its stored payload's keys come back.
      const shuffled = Object.fromEntries(Object.entries(JSON.parse(body)).reverse());
      expect(serializeEnvelope(shuffled)).toBe(body);
    }
  });

  it('keeps random payloads a fixed point too', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3) return [null, true, false, Math.round(random() * 1e6) / 1e3, -random() * 1e25, String.fromCharCode(...Array.from({ length: 5 }, () => Math.floor(random() * 0xffff)))][Math.floor(random() * 6)];
      if (r < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, (_, i) => [random() < 0.2 ? String(i * 7) : `k${Math.floor(random() * 100)}`, value(depth + 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const body = serializeEnvelope({ eventType: 'X', eventTimestamp: 't', nodeId: 'n', details: { nodeId: 'n', v: value(0) }, more: value(1) });
      expect(roundTrips(body), body).toBe(true);
    }
  });
});
