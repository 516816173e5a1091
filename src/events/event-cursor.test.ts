import { describe, expect, it } from 'vitest';
import { comparePositions, decodeEventCursor, encodeEventCursor } from './event-cursor.ts';

describe('event cursors', () => {
  it('round-trip a position and look opaque', () => {
    const cursor = encodeEventCursor({ tx: '18446744073709551615', id: 9_007_199_254_740_991 });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeEventCursor(cursor, 'after')).toEqual({ tx: '18446744073709551615', id: 9_007_199_254_740_991 });
  });

  it('refuse anything else, naming the parameter', () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64url');
    for (const bad of ['', 'x', 'a'.repeat(65), b64('event:1'), b64('event:01.2'), b64('event:1.0'), b64('node:1.2'), b64('event:1.2 '), `${b64('event:1.2')}=`, b64('event:1.99999999999999999')]) {
      expect(() => decodeEventCursor(bad, 'Last-Event-ID'), bad).toThrow(/^Last-Event-ID is not an event cursor/);
    }
  });

  it('order by transaction, then by row', () => {
    expect(comparePositions({ tx: '9', id: 5 }, { tx: '10', id: 1 })).toBeLessThan(0);
    expect(comparePositions({ tx: '10', id: 2 }, { tx: '10', id: 1 })).toBeGreaterThan(0);
    expect(comparePositions({ tx: '10', id: 2 }, { tx: '10', id: 2 })).toBe(0);
    expect(comparePositions({ tx: '11', id: 1 }, { tx: '10', id: 7 })).toBeGreaterThan(0);
  });
});
