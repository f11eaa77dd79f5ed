// When a failed webhook delivery is tried again: after each failed attempt, the next
// delay of this list, each stretched or shrunk at random by up to a fifth so that one
// endpoint's failures do not come back in step. Ten attempts over about a day; after the
// last the delivery has failed (docs/webhooks.md).
export const RETRY_DELAYS_SECONDS = [30, 120, 600, 1800, 3600, 7200, 14400, 28800, 28800] as const;

// Null once the attempts are spent. `attempt` counts from 1: the attempt that just failed.
export function retryDelaySeconds(attempt: number, random: () => number, delays: readonly number[] = RETRY_DELAYS_SECONDS) {
  const base = delays[attempt - 1];
  if (base === undefined) return null;
  return Math.max(1, Math.round(base * (0.8 + 0.4 * random())));
}

// A Retry-After the endpoint sent (seconds, or an HTTP date), within the schedule's longest
// delay; null when absent or unreadable.
export function retryAfterSeconds(header: string | null, now: number, longest = RETRY_DELAYS_SECONDS.at(-1)!): number | null {
  if (header === null || header.trim() === "") return null;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header.trim()) : (Date.parse(header) - now) / 1000;
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  return Math.min(Math.ceil(seconds), longest);
}
