// The external API's rate limits, as the database counts them
// (private.admit_api_key_request, supabase/migrations/20261124000400_external_rate_limits.sql),
// and the header fields that tell a client about them, in the form of the IETF draft
// "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11):
//   RateLimit-Policy: "api-key";q=600;w=60     the policy: q requests per w seconds
//   RateLimit: "api-key";r=598;t=41            what is left of it: r requests for t seconds
// Every answer to a request the key was counted for carries both; a 429 adds Retry-After
// (t of the policy that refused it). A 429 for an address's failed keys names the
// "failed-keys" policy instead.
import { HttpError } from "../http/problem.ts";

export type RateLimitPolicy = "api-key" | "failed-keys";

// What the database answers for a request: see the function's comment for each outcome.
export type Admission = {
  outcome: "admitted" | "limited" | "throttled" | "invalid" | "inactive";
  policy: RateLimitPolicy | null;
  quota: number | null;
  windowSeconds: number | null;
  remaining: number | null;
  resetSeconds: number | null;
};

// A policy's numbers for one answer.
export type RateLimit = { policy: RateLimitPolicy; quota: number; windowSeconds: number; remaining: number; resetSeconds: number };

export function rateLimitOf(admission: Admission): RateLimit | null {
  const { policy, quota, windowSeconds, remaining, resetSeconds } = admission;
  if (policy === null || quota === null || windowSeconds === null || remaining === null || resetSeconds === null) return null;
  return { policy, quota, windowSeconds, remaining, resetSeconds };
}

// Structured Fields (RFC 9651): a list of one item, a string with integer parameters.
export function rateLimitHeaders(limit: RateLimit): Record<string, string> {
  return {
    "ratelimit-policy": `"${limit.policy}";q=${limit.quota};w=${limit.windowSeconds}`,
    "ratelimit": `"${limit.policy}";r=${limit.remaining};t=${limit.resetSeconds}`,
  };
}

const refusals: Record<RateLimitPolicy, string> = {
  "api-key": "This API key has made all the requests its limit allows for now. Retry after the seconds Retry-After gives.",
  "failed-keys": "Too many requests from this client carried an unknown API key. Retry after the seconds Retry-After gives.",
};

export function tooManyRequests(limit: RateLimit): HttpError {
  return new HttpError("too-many-requests", refusals[limit.policy], {
    headers: { "retry-after": String(limit.resetSeconds), ...rateLimitHeaders(limit) },
  });
}
