import { describe, expect, it } from 'vitest';
import { KeyedRateLimits, takeOrThrow, TokenBucket } from '../../src/core/rate-limit.js';

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

describe('KeyedRateLimits', () => {
  it('gives every caller of one key the same bucket, and another key its own', () => {
    const limits = new KeyedRateLimits({ capacity: 2, refillPerSecond: 0.001, now: () => 0 });
    const first = limits.for('token-a');
    const second = limits.for('token-a'); // a second MCP session of the same token
    expect([first.take(), second.take(), first.take(), second.take()]).toEqual([true, true, false, false]);
    expect(limits.for('token-b').take()).toBe(true);
  });

  it('takeOrThrow answers rate_limited with when to retry', () => {
    const limiter = new TokenBucket({ capacity: 1, refillPerSecond: 0.5, now: () => 0 });
    expect(() => takeOrThrow(limiter, 'test events')).not.toThrow();
    expect(() => takeOrThrow(limiter, 'test events')).toThrow(expect.objectContaining({ code: 'rate_limited', message: expect.stringMatching(/too many test events .* try again in 2 s/) }));
  });
});
