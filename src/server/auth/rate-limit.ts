/** A token bucket per caller: a burst, refilled at a steady rate; an empty bucket says when to retry. */

/** Creates the buckets; `take(key)` answers 0 when allowed, or the milliseconds until a token is back. */
export function createRateLimiter(options: { burst: number; perSecond: number }) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key: string, now = Date.now()): number {
      const bucket = buckets.get(key) ?? { tokens: options.burst, at: now };
      bucket.tokens = Math.min(options.burst, bucket.tokens + ((now - bucket.at) / 1000) * options.perSecond);
      bucket.at = now;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return 0;
      }
      return Math.ceil(((1 - bucket.tokens) / options.perSecond) * 1000);
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
