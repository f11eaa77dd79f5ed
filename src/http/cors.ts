// Cross-origin access for browser apps (the Fetch standard's CORS protocol). The API
// authenticates with the Authorization and apikey headers, never with cookies, so no
// answer allows credentials, and a `*` policy grants nothing a listed one would not.

export type CorsPolicy = {
  // "any": every origin is granted with `Access-Control-Allow-Origin: *`; otherwise the
  // exact origins granted, each echoed back to itself.
  allowedOrigins: "any" | ReadonlySet<string>;
};

// What supabase-js and this API's clients send: the session and the project key, the
// client's own header, JSON bodies, the tenant, Prefer, conditional and idempotent writes,
// and an integration's key.
export const corsAllowedRequestHeaders = [
  "authorization",
  "apikey",
  "x-client-info",
  "content-type",
  "x-tenant-id",
  "prefer",
  "if-match",
  "idempotency-key",
  "x-api-key",
] as const;

// What a client must read from an answer: the version for If-Match, where a created
// resource is, when to retry, the rate limit, and which preference was applied.
export const corsExposedResponseHeaders = [
  "etag",
  "location",
  "retry-after",
  "ratelimit",
  "ratelimit-policy",
  "preference-applied",
] as const;

// Chromium caps a preflight's cache at two hours; asking for longer buys nothing.
const preflightMaxAgeSeconds = 7200;

// CORS_ALLOWED_ORIGINS: a comma-separated list of origins (scheme://host[:port]), or `*`.
// Unset or empty: no browser origin is granted (server-side callers are unaffected).
// A malformed entry stops the function at start rather than granting something unmeant.
export function corsPolicyFromSetting(setting: string | undefined): CorsPolicy {
  const entries = (setting ?? "").split(",").map((entry) => entry.trim()).filter(Boolean);
  if (entries.includes("*")) {
    if (entries.length > 1) throw new Error("CORS_ALLOWED_ORIGINS: `*` stands alone, not in a list of origins");
    return { allowedOrigins: "any" };
  }
  const origins = new Set<string>();
  for (const entry of entries) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`CORS_ALLOWED_ORIGINS: ${JSON.stringify(entry)} is not an origin (scheme://host[:port])`);
    }
    // An origin is compared as the browser serializes it: no path, no trailing slash.
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== entry.replace(/\/$/, "") ||
      url.pathname !== "/" || url.search !== "" || url.hash !== "") {
      throw new Error(`CORS_ALLOWED_ORIGINS: ${JSON.stringify(entry)} is not an origin (scheme://host[:port])`);
    }
    origins.add(url.origin);
  }
  return { allowedOrigins: origins };
}

// The value of Access-Control-Allow-Origin for this request's Origin, or null: no grant.
export function grantedOrigin(policy: CorsPolicy, origin: string | null): string | null {
  if (origin === null) return null;
  if (policy.allowedOrigins === "any") return "*";
  return policy.allowedOrigins.has(origin) ? origin : null;
}

// A CORS preflight: OPTIONS naming the method it asks for.
export function isPreflight(request: Request): boolean {
  return request.method === "OPTIONS" && request.headers.has("origin") &&
    request.headers.has("access-control-request-method");
}

// The grant on a preflight's answer, for the methods the path serves.
export function preflightHeaders(granted: string, methods: readonly string[], policy: CorsPolicy): Headers {
  const headers = new Headers({
    "access-control-allow-origin": granted,
    "access-control-allow-methods": methods.join(", "),
    "access-control-allow-headers": corsAllowedRequestHeaders.join(", "),
    "access-control-max-age": String(preflightMaxAgeSeconds),
  });
  // A listed origin is echoed, so caches must keep one answer per Origin.
  if (policy.allowedOrigins !== "any") headers.set("vary", "Origin");
  return headers;
}

// Adds the grant to any answer (errors included): the origin, and the headers a script
// may read. The answer is copied only when its headers cannot be changed in place.
export function withCorsGrant(response: Response, origin: string | null, policy: CorsPolicy): Response {
  const listed = policy.allowedOrigins !== "any" && policy.allowedOrigins.size > 0;
  const granted = grantedOrigin(policy, origin);
  if (granted === null && !listed) return response;
  let answer = response;
  try {
    addGrant(answer.headers, granted, listed);
  } catch {
    answer = new Response(response.body, response);
    addGrant(answer.headers, granted, listed);
  }
  return answer;
}

function addGrant(headers: Headers, granted: string | null, listed: boolean): void {
  // Whether or not this Origin is granted, the answer depends on it.
  if (listed) headers.append("vary", "Origin");
  if (granted === null) return;
  headers.set("access-control-allow-origin", granted);
  headers.set("access-control-expose-headers", corsExposedResponseHeaders.join(", "));
}
