// When Supabase Auth cannot be reached the API answers 503, never 500, on the routes
// that need Auth (sign-in, sign-up, refresh, sign-out), and every other route keeps
// working on the tokens Auth issued before: the API verifies them against its copy of
// Auth's key set, and keeps using that copy while a fresh one cannot be fetched.
// The app is built here with the real adapter aimed at an Auth of the test's own
// (test/support/auth-process.ts), which the test stops.
import assert from "node:assert/strict";
import { withFixture } from "../support/api.ts";
import { apiWithAuthAt, freePort, type InProcessApi, postJson, startAuth } from "../support/auth-process.ts";
import { tokenClaims } from "../support/session.ts";

Deno.test("sign-in, sign-up and refresh answer 503 while Supabase Auth is unreachable", async () => {
  const api = apiWithAuthAt(`http://127.0.0.1:${freePort()}`);
  try {
    const calls: [string, unknown][] = [
      ["sign-in", { email: "guest@example.com", password: "a-long-password" }],
      ["sign-up", { email: "guest@example.com", password: "a-long-password" }],
      ["refresh", { refreshToken: "abc" }],
    ];
    for (const [route, body] of calls) {
      const response = await api.handle(postJson(`/auth/${route}`, body));
      assert.equal(response.status, 503, route);
      assert.equal((await response.json()).type, "urn:pms:problem:service-unavailable");
    }
  } finally {
    await api.close();
  }
});

type Answer = { status: number; headers: Headers; body: Record<string, unknown> | null };

// A request to the in-process API, read in full.
async function send(
  api: InProcessApi,
  method: string,
  path: string,
  options: { token?: string; tenantId?: string; body?: unknown; prefer?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.tenantId) headers["x-tenant-id"] = options.tenantId;
  if (options.prefer) headers.prefer = options.prefer;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await api.handle(new Request(`http://function/api/v1${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  }));
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

function expectStatus(answer: Answer, status: number, label: string): Record<string, unknown> {
  assert.equal(answer.status, status, `${label}: ${JSON.stringify(answer.body)}`);
  return answer.body ?? {};
}

// The problem Auth's absence is answered with: 503, service-unavailable, and when to try again.
function expectAuthUnavailable(answer: Answer, label: string) {
  const problem = expectStatus(answer, 503, label);
  assert.equal(answer.headers.get("content-type"), "application/problem+json", label);
  assert.equal(problem.type, "urn:pms:problem:service-unavailable", label);
  assert.equal(problem.status, 503, label);
  assert.equal(problem.detail, "Authentication is not available right now.", label);
  assert.match(answer.headers.get("retry-after") ?? "", /^\d+$/, `${label}: Retry-After in seconds`);
}

Deno.test("Auth stopped: auth routes answer 503 with Retry-After; the other routes keep working on the tokens already issued, past the key set's max age; a write is stored once", () =>
  withFixture(async ({ sql, user }) => {
    const account = await user("auth-down");
    // The API keeps Auth's key set for 300 ms and remembers a verified token no longer:
    // the wait below outlives both, so a request after it needs the key set, which
    // cannot be fetched again.
    const cacheMs = 300;
    const auth = await startAuth({});
    const api = apiWithAuthAt(auth.url, { jwksCacheMaxAgeMs: cacheMs });
    let authStopped = false;
    try {
      // Auth up: a session through the API's sign-in, a tenant and a property.
      const session = expectStatus(await send(api, "POST", "/auth/sign-in", {
        body: { email: account.email, password: account.password },
      }), 200, "sign-in") as { accessToken: string; refreshToken: string };
      const token = session.accessToken;
      const tenant = expectStatus(
        await send(api, "POST", "/tenants", { token, body: { name: `Auth down ${crypto.randomUUID().slice(0, 8)}` }, prefer: "return=representation" }),
        201,
        "create a tenant",
      ) as { id: string };
      const tenantId = tenant.id;
      const asOwner = { token, tenantId };
      const before = expectStatus(
        await send(api, "POST", "/properties", { ...asOwner, body: { name: "Before the outage", timezone: "Europe/Lisbon", currency: "EUR" }, prefer: "return=representation" }),
        201,
        "a property while Auth is up",
      ) as { id: string };
      // /v1/me reads the user from the database and never asks Auth.
      assert.equal((expectStatus(await send(api, "GET", "/me", { token }), 200, "me") as { user: { id: string } }).user.id, account.id);

      await auth.stop();
      authStopped = true;

      // The routes that are Auth's: 503 with the problem body and Retry-After.
      expectAuthUnavailable(await send(api, "POST", "/auth/sign-in", { body: { email: account.email, password: account.password } }), "sign-in");
      expectAuthUnavailable(await send(api, "POST", "/auth/sign-up", { body: { email: `new-${account.email}`, password: "pw-a-long-password-1" } }), "sign-up");
      expectAuthUnavailable(await send(api, "POST", "/auth/refresh", { body: { refreshToken: session.refreshToken } }), "refresh");
      // Sign-out verifies the token itself (it can), then cannot reach Auth: the session stays.
      expectAuthUnavailable(await send(api, "POST", "/auth/sign-out", { token }), "sign-out");

      // Every other route, on the token Auth issued before it stopped: reads, and a write.
      const whileDown = async (label: string) => {
        const me = expectStatus(await send(api, "GET", "/me", { token }), 200, `${label}: me`) as {
          memberships: { tenantId: string }[];
        };
        assert.ok(me.memberships.some((membership) => membership.tenantId === tenantId), `${label}: me lists the tenant`);
        expectStatus(await send(api, "GET", `/properties/${before.id}`, asOwner), 200, `${label}: read a property`);
        const page = expectStatus(await send(api, "GET", "/properties", asOwner), 200, `${label}: list properties`) as {
          data: { id: string }[];
        };
        return page.data.map((property) => property.id);
      };
      await whileDown("Auth just stopped");
      const during = expectStatus(
        await send(api, "POST", "/properties", { ...asOwner, body: { name: "During the outage", timezone: "Europe/Lisbon", currency: "EUR" }, prefer: "return=representation" }),
        201,
        "a property while Auth is down",
      ) as { id: string };

      // Past the key set's max age: the API tries to fetch it again, cannot, and keeps
      // verifying with the set it has (stale-if-error) rather than refusing everyone.
      await new Promise((resolve) => setTimeout(resolve, cacheMs + 200));
      const listed = await whileDown("the key set aged");
      expectStatus(await send(api, "GET", `/properties/${during.id}`, asOwner), 200, "read the outage's write");
      // A token the key set does not vouch for is still refused: the same claims under a signature of another token.
      const [header, payload] = token.split(".");
      const forged = `${header}.${payload}.${before.id.replaceAll("-", "")}`;
      assert.equal((await send(api, "GET", "/me", { token: forged })).status, 401, "a forged signature is refused");

      // Nothing lost or doubled: each property once, in the list and in the table.
      assert.deepEqual(listed.filter((id) => id === before.id || id === during.id).sort(), [before.id, during.id].sort());
      const rows = await sql<{ name: string; count: number }[]>`
        select name, count(*)::int as count from public.properties where tenant_id = ${tenantId} group by name order by name`;
      assert.deepEqual(rows.map((row) => [row.name, row.count]), [["Before the outage", 1], ["During the outage", 1]]);
      // The failed sign-out ended nothing: the session is still active.
      const [active] = await sql<{ count: number }[]>`
        select count(*)::int as count from auth.sessions where user_id = ${account.id}
          and id = ${String(tokenClaims(token).session_id)}`;
      assert.equal(active!.count, 1);
    } finally {
      if (!authStopped) await auth.stop();
      await api.close();
    }
  }));
