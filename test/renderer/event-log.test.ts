import { describe, expect, it } from 'vitest';
import type { EventSummary } from '../../src/shared/events';
import { EventLog } from '../../src/renderer/src/lib/event-log';

const ev = (id: number): EventSummary => ({
  id,
  provider: 'p',
  family: 'webhook',
  event_type: null,
  external_id: null,
  origin: 'provider',
  trust_mode: 'open',
  verified: false,
  payload_size: 0,
  received_at: '2026-11-30T00:00:00.000000Z',
});

describe('EventLog', () => {
  it('shows live rows above loaded pages, newest first, without duplicates', () => {
    const log = new EventLog();
    log.appendPage([ev(10), ev(9), ev(8)], 'cursor-1');
    log.prepend([ev(11), ev(12)]);
    log.prepend([ev(12), ev(13)]);
    log.appendPage([ev(8), ev(7)], undefined);
    expect(Array.from({ length: log.length }, (_, i) => log.at(i)!.id)).toEqual([13, 12, 11, 10, 9, 8, 7]);
    expect(log.complete).toBe(true);
    expect(log.topId()).toBe(13);
    expect(log.indexOf(11)).toBe(2);
    expect(log.indexOf(7)).toBe(6);
    expect(log.indexOf(99)).toBe(-1);
    expect(log.at(7)).toBeUndefined();
  });

  it('notifies subscribers with a new version on every change, and resets', () => {
    const log = new EventLog();
    let calls = 0;
    const unsubscribe = log.subscribe(() => calls++);
    const before = log.getVersion();
    expect(log.prepend([ev(1)])).toBe(1);
    expect(log.prepend([ev(1)])).toBe(0);
    log.reset();
    expect(calls).toBe(2);
    expect(log.getVersion()).toBe(before + 2);
    expect(log.length).toBe(0);
    expect(log.has(1)).toBe(false);
    unsubscribe();
    log.prepend([ev(2)]);
    expect(calls).toBe(2);
  });

  it('inserts in constant time at 100,000 rows', () => {
    const log = new EventLog();
    log.appendPage(Array.from({ length: 100_000 }, (_, i) => ev(100_000 - i)), 'more');
    const start = performance.now();
    for (let i = 1; i <= 1000; i++) log.prepend([ev(100_000 + i)]);
    expect(performance.now() - start).toBeLessThan(200);
    expect(log.at(0)!.id).toBe(101_000);
    expect(log.at(100_999)!.id).toBe(1);
  });
});
