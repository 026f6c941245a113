import { describe, expect, it } from 'vitest';
import { formatListTime, formatTime, msUntilTomorrow } from '../../src/renderer/src/lib/time';

// Local times, built with local constructors, so the test holds in any time zone.
const now = new Date(2026, 10, 30, 15, 20, 0);
const iso = (...parts: [number, number, number, number, number, number, number]) => new Date(...parts).toISOString();

describe('times', () => {
  it('shows only the time today, the date otherwise', () => {
    expect(formatTime(iso(2026, 10, 30, 9, 5, 7, 42), now)).toBe('09:05:07.042');
    expect(formatTime(iso(2026, 10, 29, 23, 59, 59, 999), now)).toBe('2026-11-29 23:59:59.999');
  });

  it('keeps the list column narrow: month-day this year, the year before that', () => {
    expect(formatListTime(iso(2026, 10, 30, 0, 0, 1, 5), now)).toBe('00:00:01.005');
    expect(formatListTime(iso(2026, 10, 29, 14, 3, 22, 118), now)).toBe('11-29 14:03:22');
    expect(formatListTime(iso(2026, 0, 2, 8, 0, 0, 0), now)).toBe('01-02 08:00:00');
    expect(formatListTime(iso(2025, 11, 31, 23, 1, 0, 0), now)).toBe('2025-12-31 23:01');
  });

  it('passes through what is not a time, and knows when the day changes', () => {
    expect(formatListTime('yesterday', now)).toBe('yesterday');
    expect(msUntilTomorrow(now)).toBe((8 * 60 + 40) * 60_000);
  });
});
