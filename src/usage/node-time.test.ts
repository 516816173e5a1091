import { describe, expect, it } from 'vitest';
import { DAY_MS, monthRange, nodeTime, previousMonth } from './node-time.ts';

const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;

describe('nodeTime', () => {
  it('splits a running interval exactly at the month boundary', () => {
    const changes = [{ status: 'RUNNING', changedAt: at('2026-11-30T23:00:00Z') }, { status: 'PAUSED', changedAt: at('2026-12-01T01:00:00Z') }];
    const now = at('2026-12-01T02:00:00Z');
    const nov = nodeTime(changes, ...Object.values(monthRange('2026-11')) as [Date, Date], now);
    const dec = nodeTime(changes, ...Object.values(monthRange('2026-12')) as [Date, Date], now);
    expect(nov.runningMs).toBe(HOUR);
    expect(nov.days[29]).toEqual({ runningMs: HOUR, pausedMs: 0 });
    expect(dec.runningMs).toBe(HOUR);
    expect(dec.pausedMs).toBe(HOUR); // paused from 01:00 until now
    expect(dec.days[0]).toEqual({ runningMs: HOUR, pausedMs: HOUR });
    expect(dec.days).toHaveLength(31);
  });

  it('starts from the status in force before the period, and ends an open interval at now', () => {
    const { from, to } = monthRange('2026-11');
    const t = nodeTime([{ status: 'RUNNING', changedAt: at('2026-10-15T00:00:00Z') }], from, to, at('2026-11-03T12:00:00Z'));
    expect(t.runningMs).toBe(2.5 * DAY_MS);
    expect(t.days.slice(0, 4).map((d) => d.runningMs)).toEqual([DAY_MS, DAY_MS, DAY_MS / 2, 0]);
  });

  it('ends an open interval at the end of the period once it has passed', () => {
    const { from, to } = monthRange('2026-02');
    const t = nodeTime([{ status: 'PAUSED', changedAt: at('2026-01-01T00:00:00Z') }], from, to, at('2027-01-01T00:00:00Z'));
    expect(t.pausedMs).toBe(28 * DAY_MS);
    expect(t.days).toHaveLength(28);
  });

  it('counts neither other statuses nor time before the first change', () => {
    const { from, to } = monthRange('2026-11');
    const changes = [
      { status: 'STARTING', changedAt: at('2026-11-02T00:00:00Z') },
      { status: 'RUNNING', changedAt: at('2026-11-02T00:01:00Z') },
      { status: 'FAILED', changedAt: at('2026-11-02T00:02:00Z') },
      { status: 'DESTROYED', changedAt: at('2026-11-02T00:03:00Z') },
    ];
    const t = nodeTime(changes, from, to, at('2026-11-20T00:00:00Z'));
    expect(t).toMatchObject({ runningMs: 60_000, pausedMs: 0 });
  });

  it('knows the month before', () => {
    expect(previousMonth('2026-01')).toBe('2025-12');
    expect(previousMonth('2026-11')).toBe('2026-10');
  });
});
