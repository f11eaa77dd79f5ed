// Supabase Auth's own rate limits, passed on as 429 with Retry-After. Auth limits per
// client only where GOTRUE_RATE_LIMIT_HEADER names the header holding the client's
// address (hosted projects); the stack leaves it unset, as `supabase start` does, so
// this test runs an Auth process of its own with it set, and an in-process API aimed
// at it. The API calls Auth server to server: it must pass the end client's address
// on, or every client would share one bucket.
import assert from "node:assert/strict";
import { RATE_LIMIT_RETRY_AFTER_SECONDS } from "../../src/auth/handlers.ts";
import { type Schemas, withFixture } from "../support/api.ts";
import { apiWithAuthAt, postJson, startAuth } from "../support/auth-process.ts";
import { assertMatchesContract } from "../support/openapi.ts";

// Auth's /token limiter (sign-in and refresh alike) is a token bucket that holds 30
// requests and refills at GOTRUE_RATE_LIMIT_TOKEN_REFRESH per 5 minutes: with 3, one
// every 100 s, so nothing refills while the test runs.
const BUCKET = 30;
const EXHAUSTED = "198.51.100.10";
const OTHER = "198.51.100.20";

Deno.test("Auth's rate limit: 429 with Retry-After for the client address that reached it; another address is still served", () =>
  withFixture(async ({ user }) => {
    const alice = await user("rate-limited");
    const auth = await startAuth({ GOTRUE_RATE_LIMIT_HEADER: "X-Forwarded-For", GOTRUE_RATE_LIMIT_TOKEN_REFRESH: "3" });
    const api = apiWithAuthAt(auth.url);
    try {
      // Spend the bucket of one address with refresh tokens Auth does not know.
      for (let attempt = 1; attempt <= BUCKET; attempt++) {
        const response = await api.handle(postJson("/auth/refresh", { refreshToken: "abcdefghijkl" }, EXHAUSTED));
        assert.equal(response.status, 401, `attempt ${attempt} is within the bucket`);
        await response.body?.cancel();
      }

      // The next /token call from that address, a sign-in with the right password: 429.
      const limited = await api.handle(postJson("/auth/sign-in", { email: alice.email, password: alice.password }, EXHAUSTED));
      const problem = await assertMatchesContract("POST", "/v1/auth/sign-in", limited) as Schemas["Problem"];
      assert.equal(limited.status, 429);
      assert.equal(problem.type, "urn:pms:problem:too-many-requests");
      // Auth sends no Retry-After of its own, so the API's.
      assert.equal(limited.headers.get("retry-after"), String(RATE_LIMIT_RETRY_AFTER_SECONDS));
      const refresh = await api.handle(postJson("/auth/refresh", { refreshToken: alice.refreshToken }, EXHAUSTED));
      assert.equal(refresh.status, 429, "refresh shares the bucket");
      assert.ok(refresh.headers.get("retry-after"));
      await refresh.body?.cancel();

      // Another client's address has its own bucket: signed in.
      const served = await api.handle(postJson("/auth/sign-in", { email: alice.email, password: alice.password }, OTHER));
      const session = await assertMatchesContract("POST", "/v1/auth/sign-in", served) as Schemas["Session"];
      assert.equal(served.status, 200);
      assert.equal(session.user.id, alice.id);
    } finally {
      await api.close();
      await auth.stop();
    }
  }));

Deno.test("a Retry-After that Auth sends with its 429 is passed on as it is", async () => {
  const standIn = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
    Response.json(
      { code: 429, error_code: "over_request_rate_limit", msg: "Request rate limit reached" },
      { status: 429, headers: { "retry-after": "17" } },
    ));
  const api = apiWithAuthAt(`http://127.0.0.1:${standIn.addr.port}`);
  try {
    const response = await api.handle(postJson("/auth/sign-in", { email: "someone@example.com", password: "a-password-1" }, OTHER));
    assert.equal(response.status, 429);
    assert.equal(response.headers.get("retry-after"), "17");
    assert.equal((await response.json()).type, "urn:pms:problem:too-many-requests");
  } finally {
    await api.close();
    await standIn.shutdown();
  }
});
