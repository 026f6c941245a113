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
  attempts: 1,
  drift: false,
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

  it('keeps each event’s last replay, from pages and from live replays, newest wins', () => {
    const log = new EventLog();
    const failed = { delivered: false, response_status: null, requested_by: 'forward' as const, created_at: '2026-11-30T10:00:00.000001Z' };
    log.appendPage([{ ...ev(2), last_replay: failed }, { ...ev(1), last_replay: null }], undefined);
    expect(log.lastReplay(2)).toEqual(failed);
    expect(log.lastReplay(1)).toBeNull();
    const version = log.getVersion();
    log.noteReplay(1, { delivered: true, response_status: 500, requested_by: 'ui', created_at: '2026-11-30T10:00:01.000000Z' });
    expect(log.lastReplay(1)).toMatchObject({ response_status: 500, requested_by: 'ui' });
    expect(log.getVersion()).toBe(version + 1);
    // An older replay arriving late does not hide a newer one.
    log.noteReplay(2, { ...failed, delivered: true, response_status: 200, created_at: '2026-11-30T09:00:00.000000Z' });
    expect(log.lastReplay(2)).toEqual(failed);
    // A replay of an event not listed yet marks it once it arrives, without a render now.
    log.noteReplay(3, failed);
    expect(log.getVersion()).toBe(version + 1);
    log.prepend([ev(3)]);
    expect(log.lastReplay(3)).toEqual(failed);
    log.reset();
    expect(log.lastReplay(2)).toBeNull();
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
