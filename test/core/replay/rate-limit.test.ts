import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/core/replay/rate-limit.js';

describe('TokenBucket', () => {
  it('allows a burst of `capacity`, then refills at the set rate', () => {
    let now = 1_000_000;
    const bucket = new TokenBucket({ capacity: 3, refillPerSecond: 0.5, now: () => now });
    expect([bucket.take(), bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, true, false]);
    expect(bucket.retryAfterMs()).toBe(2_000);
    now += 1_999;
    expect(bucket.take()).toBe(false);
    now += 1;
    expect(bucket.retryAfterMs()).toBe(0);
    expect(bucket.take()).toBe(true);
    expect(bucket.take()).toBe(false);
  });

  it('never holds more than its capacity, and survives a clock stepping back', () => {
    let now = 0;
    const bucket = new TokenBucket({ capacity: 2, refillPerSecond: 10, now: () => now });
    now += 60_000;
    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, false]);
    now -= 30_000;
    expect(bucket.take()).toBe(false);
    now += 100;
    expect(bucket.take()).toBe(true);
  });

  it('refuses a bucket that could never give a token', () => {
    expect(() => new TokenBucket({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
    expect(() => new TokenBucket({ capacity: 1, refillPerSecond: 0 })).toThrow(RangeError);
  });
});
