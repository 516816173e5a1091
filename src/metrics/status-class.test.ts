import { describe, expect, it } from 'vitest';
import { STATUS_CLASSES, statusClass, statusClassIndex } from './status-class.ts';

describe('statusClass', () => {
  it('puts each status in its hundred', () => {
    expect([100, 101, 199].map(statusClass)).toEqual(['1xx', '1xx', '1xx']);
    expect([200, 204, 299].map(statusClass)).toEqual(['2xx', '2xx', '2xx']);
    expect([301, 304].map(statusClass)).toEqual(['3xx', '3xx']);
    expect([400, 403, 404, 408, 499].map(statusClass)).toEqual(['4xx', '4xx', '4xx', '4xx', '4xx']);
    expect([500, 502, 504, 599].map(statusClass)).toEqual(['5xx', '5xx', '5xx', '5xx']);
  });

  it('answers other outside 100-599 rather than inventing a class', () => {
    expect([0, 99, 600, 999, Number.NaN].map(statusClass)).toEqual(['other', 'other', 'other', 'other', 'other']);
  });

  it('indexes STATUS_CLASSES', () => {
    for (const status of [100, 200, 300, 400, 500, 700]) expect(STATUS_CLASSES[statusClassIndex(status)]).toBe(statusClass(status));
  });
});
