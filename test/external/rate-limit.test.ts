// The external API's rate limits (src/external/rate-limit.ts, counted by
// private.admit_api_key_request): requests per API key and window, and unknown keys per
// client address and window, both counted in Postgres so that every function instance
// shares the count. Every answer a key's request was counted for carries the RateLimit
// and RateLimit-Policy fields of draft-ietf-httpapi-ratelimit-headers-11; a 429 adds
// Retry-After.
//
// The limits of a test key are set small with SQL (an operator's way). Requests that
// must come from a client address of their own go to the api function's app built in
// this process (an instance of the function beside the stack's, on the same database)
// with the X-Forwarded-For the gateway would set: through the gateway, every test comes
// from 127.0.0.1.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { sleep } from "../../local/capture.ts";
import { expectProblem, expectStatus, type Page, withFixture } from "../support/api.ts";
import { apiDocument } from "../support/api-document.ts";
import { apiWithAuthAt, type InProcessApi } from "../support/auth-process.ts";
import { createStay, type Reservation } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";
import { assertMatchesContract } from "../support/openapi.ts";
import { stack } from "../support/stack.ts";

const LIST = "/v1/external/reservations";
const ONE = "/v1/external/reservations/{id}";
const PAY = "/v1/external/reservations/{id}/payments";

type Policy = { policy: string; quota: number; window: number };
type Left = { policy: string; remaining: number; reset: number };

// The document's patterns for both fields: what the fuzzer holds every answer to.
async function fieldPatterns(): Promise<{ policy: RegExp; limit: RegExp }> {
  const document = await apiDocument() as unknown as {
    components: { headers: Record<string, { schema: { pattern: string } }> };
  };
  const { RateLimitPolicy, RateLimit } = document.components.headers;
  return { policy: new RegExp(RateLimitPolicy!.schema.pattern), limit: new RegExp(RateLimit!.schema.pattern) };
}

// RateLimit-Policy: "api-key";q=3;w=60 and RateLimit: "api-key";r=2;t=59, checked against the document.
async function rateLimitOf(response: Response): Promise<Policy & Left> {
  const patterns = await fieldPatterns();
  const policyField = response.headers.get("ratelimit-policy") ?? "";
  const limitField = response.headers.get("ratelimit") ?? "";
  assert.match(policyField, patterns.policy, "RateLimit-Policy as the document describes it");
  assert.match(limitField, patterns.limit, "RateLimit as the document describes it");
  const policy = /^"([^"]+)";q=(\d+);w=(\d+)$/.exec(policyField)!;
  const left = /^"([^"]+)";r=(\d+);t=(\d+)$/.exec(limitField)!;
  assert.equal(left[1], policy[1], "both fields name the same policy");
  return { policy: policy[1]!, quota: Number(policy[2]), window: Number(policy[3]), remaining: Number(left[2]), reset: Number(left[3]) };
}

async function setLimit(sql: postgres.Sql, keyId: string, limit: number, windowSeconds: number): Promise<void> {
  await sql`update public.api_keys set rate_limit = ${limit}, rate_limit_window_seconds = ${windowSeconds} where id = ${keyId}`;
}

// A request to an in-process instance of the api function, from `address` as the gateway
// reports it.
function inProcess(api: InProcessApi, path: string, key: string, address?: string): Promise<Response> {
  return api.handle(new Request(`http://function/api/v1/external${path}`, {
    headers: { "x-api-key": key, ...(address ? { "x-forwarded-for": address } : {}) },
  }));
}

// An address of the IPv6 documentation prefix no other run uses.
function documentationAddress(): string {
  const word = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `2001:db8:${word()}:${word()}::${word()}`;
}

Deno.test("under its limit a key's answers count down in RateLimit; over it, a 429 with Retry-After and the fields, and nothing is done", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("limited");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    await setLimit(sql, key.id, 3, 60);

    const seen: (Policy & Left)[] = [];
    for (let request = 1; request <= 3; request++) {
      const response = await external("GET", `/reservations/${stay.reservation.id}`, key.secret);
      await expectStatus<Reservation>("GET", ONE, response, 200);
      seen.push(await rateLimitOf(response));
    }
    assert.deepEqual(seen.map(({ policy, quota, window, remaining }) => ({ policy, quota, window, remaining })), [
      { policy: "api-key", quota: 3, window: 60, remaining: 2 },
      { policy: "api-key", quota: 3, window: 60, remaining: 1 },
      { policy: "api-key", quota: 3, window: 60, remaining: 0 },
    ]);
    for (const { reset } of seen) assert.ok(reset >= 1 && reset <= 60, `t=${reset} lies within the window`);

    // Every route answers the same 429 once the limit is spent; a write does nothing.
    const refusals = [
      { template: LIST, response: await external("GET", "/reservations", key.secret) },
      { template: ONE, response: await external("GET", `/reservations/${stay.reservation.id}`, key.secret) },
      {
        template: PAY,
        response: await external("POST", `/reservations/${stay.reservation.id}/payments`, key.secret, {
          body: { amount: 100, currency: "EUR", method: "card", externalReference: "over-the-limit" },
        }),
      },
    ];
    for (const { template, response } of refusals) {
      const method = template === PAY ? "POST" : "GET";
      await expectProblem(method, template, response, 429, "too-many-requests");
      const limit = await rateLimitOf(response);
      assert.deepEqual({ policy: limit.policy, quota: limit.quota, window: limit.window, remaining: limit.remaining },
        { policy: "api-key", quota: 3, window: 60, remaining: 0 }, template);
      assert.equal(response.headers.get("retry-after"), String(limit.reset), `${template}: Retry-After is the window's end`);
    }
    const [paid] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.payments where reservation_id = ${stay.reservation.id}`;
    assert.equal(paid?.count, 0, "the refused payment recorded nothing");
    const [window] = await sql<{ requests: number }[]>`
      select requests from public.api_key_request_windows where api_key_id = ${key.id}`;
    assert.equal(window?.requests, 3, "refused requests are not counted");
  }));

Deno.test("another key is not affected by a key that spent its limit, and a refusal after the key still counts", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("limited");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const spent = await issueApiKey(a.ownerClient, stay.property.id);
    const other = await issueApiKey(a.ownerClient, stay.property.id);
    await setLimit(sql, spent.id, 1, 60);
    // A 404 is an answer the key was counted for, with its fields.
    const missing = await external("GET", `/reservations/${crypto.randomUUID()}`, spent.secret);
    await expectProblem("GET", ONE, missing, 404, "not-found");
    assert.equal((await rateLimitOf(missing)).remaining, 0);
    await expectProblem("GET", LIST, await external("GET", "/reservations", spent.secret), 429, "too-many-requests");

    const served = await external("GET", "/reservations", other.secret);
    const page = await expectStatus<Page<Reservation>>("GET", LIST, served, 200);
    assert.deepEqual(page.data.map((row) => row.id), [stay.reservation.id]);
    const limit = await rateLimitOf(served);
    // The default: 600 requests per 60 seconds (supabase/migrations/20261124000400_external_rate_limits.sql).
    assert.deepEqual({ policy: limit.policy, quota: limit.quota, window: limit.window, remaining: limit.remaining },
      { policy: "api-key", quota: 600, window: 60, remaining: 599 });
  }));

Deno.test("two instances of the function share one count: of 30 concurrent requests on a limit of 10, exactly 10 are served", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("limited");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    await setLimit(sql, key.id, 10, 60);
    // The stack's function through the gateway, and another instance of it in this process.
    const instance = apiWithAuthAt(stack.authUrl);
    try {
      const burst = (send: () => Promise<Response>) => Array.from({ length: 15 }, send);
      const responses = await Promise.all([
        ...burst(() => external("GET", "/reservations", key.secret)),
        ...burst(async () => {
          const response = await inProcess(instance, "/reservations", key.secret);
          return new Response(await response.arrayBuffer(), { status: response.status, headers: response.headers });
        }),
      ]);
      const served = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.status === 429);
      assert.equal(served.length, 10, "exactly the limit is served");
      assert.equal(refused.length, 20, "every other request is a 429");
      for (const response of [...served, ...refused]) await assertMatchesContract("GET", LIST, response);
      // Each request served saw a count of its own: what was left after it is 9, 8, ..., 0 once each.
      const remaining = await Promise.all(served.map(async (response) => (await rateLimitOf(response)).remaining));
      assert.deepEqual(remaining.sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const [window] = await sql<{ requests: number }[]>`
        select requests from public.api_key_request_windows where api_key_id = ${key.id}`;
      assert.equal(window?.requests, 10);
    } finally {
      await instance.close();
    }
  }));

Deno.test("a window ends: a key with 2 requests per 3 seconds is served again once Retry-After has passed", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("limited");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    await setLimit(sql, key.id, 2, 3);
    const read = () => external("GET", `/reservations/${stay.reservation.id}`, key.secret);

    await expectStatus("GET", ONE, await read(), 200);
    await expectStatus("GET", ONE, await read(), 200);
    const refused = await read();
    await expectProblem("GET", ONE, refused, 429, "too-many-requests");
    const wait = Number(refused.headers.get("retry-after"));
    assert.ok(wait >= 1 && wait <= 3, `Retry-After ${wait} is within the window of 3 seconds`);

    await sleep(wait * 1000 + 100);
    const again = await read();
    await expectStatus("GET", ONE, again, 200);
    const limit = await rateLimitOf(again);
    assert.deepEqual({ quota: limit.quota, window: limit.window, remaining: limit.remaining }, { quota: 2, window: 3, remaining: 1 },
      "a new window, this request its first");
    assert.ok(limit.reset >= 2, `t=${limit.reset}: the new window began with this request`);
  }));

Deno.test("unknown keys from one address: after the limit a 429 whatever the key, before it is read; another address still gets 401", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("limited");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const [policy] = await sql<{ quota: number; window: number }[]>`
      select quota, window_seconds as window from private.failed_api_key_policy()`;
    const { quota, window } = policy!;
    // A wrong secret of a real key id and an unknown key id count alike.
    const wrongSecret = `${key.secret.slice(0, 22)}${"A".repeat(43)}`;
    const unknownId = `live_${"a".repeat(16)}_${key.secret.slice(22)}`;
    const guesser = documentationAddress();
    const neighbour = documentationAddress();
    const instance = apiWithAuthAt(stack.authUrl);
    try {
      for (let attempt = 1; attempt <= quota; attempt++) {
        const response = await inProcess(instance, "/reservations", attempt % 2 ? wrongSecret : unknownId, guesser);
        await expectProblem("GET", LIST, response, 401, "unauthorized");
        assert.equal(response.headers.get("ratelimit"), null, "a request no key counted carries no RateLimit");
      }

      const throttled = await inProcess(instance, "/reservations", unknownId, guesser);
      await expectProblem("GET", LIST, throttled, 429, "too-many-requests");
      const limit = await rateLimitOf(throttled);
      assert.deepEqual({ policy: limit.policy, quota: limit.quota, window: limit.window, remaining: limit.remaining },
        { policy: "failed-keys", quota, window, remaining: 0 });
      assert.equal(throttled.headers.get("retry-after"), String(limit.reset));
      // The right key from that address is refused alike: the answer says nothing of any key.
      const valid = await inProcess(instance, "/reservations", key.secret, guesser);
      await expectProblem("GET", LIST, valid, 429, "too-many-requests");
      assert.equal((await rateLimitOf(valid)).policy, "failed-keys");
      const [counted] = await sql<{ failures: number }[]>`
        select failures from private.failed_api_key_attempts where client_address = ${guesser}`;
      assert.equal(counted?.failures, quota, "refused requests are not counted again");

      // Another address: its own count.
      await expectProblem("GET", LIST, await inProcess(instance, "/reservations", unknownId, neighbour), 401, "unauthorized");
      await expectStatus("GET", LIST, await inProcess(instance, "/reservations", key.secret, neighbour), 200);
    } finally {
      await instance.close();
      await sql`delete from private.failed_api_key_attempts where client_address = any(${[guesser, neighbour]})`;
    }
  }));
