/**
 * A token bucket per caller (DESIGN §7: MCP replays are rate-limited per session, the UI is
 * not). An agent stuck in a loop can then replay a burst, but not hammer a local consumer.
 */

export interface TokenBucketOptions {
  /** Burst size: how many takes succeed back to back on a full bucket. */
  capacity: number;
  refillPerSecond: number;
  now?: () => number;
}

export class TokenBucket {
  private tokens: number;
  private updatedAt: number;
  private readonly now: () => number;

  constructor(private readonly options: TokenBucketOptions) {
    if (!(options.capacity >= 1) || !(options.refillPerSecond > 0)) {
      throw new RangeError('a token bucket needs capacity >= 1 and refillPerSecond > 0');
    }
    this.now = options.now ?? Date.now;
    this.tokens = options.capacity;
    this.updatedAt = this.now();
  }

  /** Takes one token if there is one. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until the next take() can succeed; 0 when it would now. For `rate_limited` hints. */
  retryAfterMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.options.refillPerSecond) * 1000);
  }

  private refill(): void {
    const now = this.now();
    // A clock that steps backwards must not drain the bucket.
    const elapsedMs = Math.max(0, now - this.updatedAt);
    this.tokens = Math.min(this.options.capacity, this.tokens + (elapsedMs / 1000) * this.options.refillPerSecond);
    this.updatedAt = now;
  }
}
