import { createHash } from 'node:crypto';
import { SwitchboardError } from './errors.js';

/**
 * Rate limits for what an MCP caller can make happen (DESIGN §6/§7): replays and test events
 * share one token bucket per bearer token, not per session — a new session (or a thousand)
 * must not mean a new burst. An agent stuck in a loop can act in a burst, but not hammer a
 * local consumer. The UI is not limited.
 */

/** What a tool with a side effect asks before acting. */
export interface ActionLimiter {
  take(): boolean;
  retryAfterMs(): number;
}

export interface TokenBucketOptions {
  /** Burst size: how many takes succeed back to back on a full bucket. */
  capacity: number;
  refillPerSecond: number;
  now?: () => number;
}

export class TokenBucket implements ActionLimiter {
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

/**
 * One bucket per caller key (the bearer token: only requests that presented a valid one get
 * here, so the map holds one entry per token in use). Keys are kept as hashes, not tokens.
 */
export class KeyedRateLimits {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly options: TokenBucketOptions) {}

  for(key: string): ActionLimiter {
    const hashed = createHash('sha256').update(key).digest('hex');
    let bucket = this.buckets.get(hashed);
    if (!bucket) {
      bucket = new TokenBucket(this.options);
      this.buckets.set(hashed, bucket);
    }
    return bucket;
  }
}

/**
 * Takes one action from `limiter`, or throws `rate_limited` saying when to retry. Every MCP tool
 * with a side effect (replay_webhook_event, send_test_event) calls this with its session's
 * limiter, which is shared by every session of the same token.
 */
export function takeOrThrow(limiter: ActionLimiter, what: string): void {
  if (limiter.take()) return;
  const seconds = Math.max(1, Math.ceil(limiter.retryAfterMs() / 1000));
  throw new SwitchboardError(
    'rate_limited',
    `too many ${what} with this token (replays, test events and suite runs share one limit across all MCP sessions); try again in ${seconds} s`,
  );
}
