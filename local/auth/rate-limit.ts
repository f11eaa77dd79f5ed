// Supabase Auth's request limits: a token bucket per value of the header that
// GOTRUE_RATE_LIMIT_HEADER names (hosted projects name the client's address), which starts
// full and refills continuously. Without that setting, or without the header on a
// request, Auth limits nothing, and neither does the double.
import type { RateLimit } from "./config.ts";

export type Limiter = {
  // Whether a request with this key may go on; takes a token when it may.
  allow(key: string | null, now: number): boolean;
};

// Buckets untouched for an hour are forgotten (a full bucket would be made again anyway).
const IDLE_MS = 3_600_000;

export function createLimiter(limit: RateLimit): Limiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    allow(key, now) {
      if (key === null) return true;
      let bucket = buckets.get(key);
      if (!bucket || now - bucket.at > IDLE_MS) {
        if (!bucket && buckets.size >= 10_000) {
          for (const [other, { at }] of buckets) if (now - at > IDLE_MS) buckets.delete(other);
        }
        bucket = { tokens: limit.burst, at: now };
        buckets.set(key, bucket);
      } else {
        bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * limit.perSecond);
        bucket.at = now;
      }
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
  };
}
