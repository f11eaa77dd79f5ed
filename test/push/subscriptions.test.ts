// Push subscriptions end to end: a member registers their browser's PushSubscription in a
// tenant (POST /v1/push/subscriptions), lists, reads and removes their own. The body is the
// browser's toJSON() with a real P-256 key; every answer is checked against the served
// contract, and what is stored against the database. Each member only ever sees and removes
// their own subscriptions, by the table's row-level security; an endpoint registered again
// is one browser's, and becomes whoever registered it last.
import assert from "node:assert/strict";
import type postgres from "postgres";
import {
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  expectUnprocessable,
  MALFORMED_ID,
  readBack,
  readOne,
  representation,
  UNKNOWN_ID,
  withFixture,
  expectSignedInOnly,
  type RouteCall,
} from "../support/api.ts";
import { deliverToInbox, storedMessages } from "../support/inbox.ts";
import {
  base64url,
  browserSubscription,
  listSubscriptions,
  p256PublicKey,
  PUSH_PUBLIC_KEY,
  PUSH_SUBSCRIPTION,
  PUSH_SUBSCRIPTIONS,
  type PushSubscription,
  register,
} from "../support/push.ts";
import { stack } from "../support/stack.ts";

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

type StoredSubscription = {
  userId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  expiresAt: string | null;
  userAgent: string | null;
};

// The tenant's rows for an endpoint, as the database holds them.
async function stored(sql: postgres.Sql, tenantId: string, endpoint: string): Promise<StoredSubscription[]> {
  return [...await sql<StoredSubscription[]>`
    select user_id::text as "userId", endpoint, p256dh, auth,
           to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "expiresAt", user_agent as "userAgent"
    from public.push_subscriptions where tenant_id = ${tenantId} and endpoint = ${endpoint}`];
}

async function subscriptionsOf(sql: postgres.Sql, tenantId: string, userId: string): Promise<number> {
  const [row] = await sql<{ count: number }[]>`
    select count(*)::int as count from public.push_subscriptions where tenant_id = ${tenantId} and user_id = ${userId}`;
  return row!.count;
}

// ---------------------------------------------------------------- registering

Deno.test("POST /v1/push/subscriptions: registers the caller's browser: 201 with Location, ETag and its id, or with it under Prefer; the keys are kept, never answered", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("push-register");
    const staff = await memberOf(t, "staff");
    const api = client(staff, t.tenantId);
    const userAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

    const browser = await browserSubscription({ expirationTime: Date.UTC(2027, 5, 1, 12, 30, 15, 250) });
    const minimal = await api.post("/push/subscriptions", browser, { "user-agent": userAgent });
    const { etag } = await expectMinimal("POST", PUSH_SUBSCRIPTIONS, minimal, 201);
    const { location, body } = await readBack<PushSubscription>(api, "/push/subscriptions", minimal, PUSH_SUBSCRIPTION);
    assert.equal(location, `/push/subscriptions/${body.id}`);
    assert.deepEqual(body, {
      id: body.id, endpoint: browser.endpoint, expiresAt: "2027-06-01T12:30:15.25+00:00", userAgent, lastAcceptedAt: null,
      createdAt: body.createdAt, updatedAt: body.createdAt,
    });
    assert.equal((await readOne(api, PUSH_SUBSCRIPTION, { id: body.id })).etag, etag);
    assert.ok(!("keys" in body) && !JSON.stringify(body).includes(browser.keys.p256dh), "the keys are not answered");
    assert.deepEqual(await stored(sql, t.tenantId, browser.endpoint), [{
      userId: staff.id, endpoint: browser.endpoint, p256dh: browser.keys.p256dh, auth: browser.keys.auth,
      expiresAt: "2027-06-01T12:30:15.250Z", userAgent,
    }]);

    // Prefer: return=representation: 201, Location and the subscription. Padded keys are
    // kept without their padding; no expiry and no User-Agent are nulls.
    const padded = await browserSubscription();
    delete padded.expirationTime;
    padded.keys = { p256dh: `${padded.keys.p256dh}=`, auth: `${padded.keys.auth}==` };
    const created = await api.post("/push/subscriptions", padded, representation);
    const second = await expectStatus<PushSubscription>("POST", PUSH_SUBSCRIPTIONS, created, 201);
    assert.equal(created.headers.get("preference-applied"), "return=representation");
    assert.equal((await readBack<PushSubscription>(api, "/push/subscriptions", created, PUSH_SUBSCRIPTION)).body.id, second.id);
    assert.equal(second.expiresAt, null);
    const [row] = await stored(sql, t.tenantId, padded.endpoint);
    assert.equal(row!.p256dh, padded.keys.p256dh.replace(/=+$/, ""));
    assert.equal(row!.auth, padded.keys.auth.replace(/=+$/, ""));
    assert.equal(row!.userAgent, second.userAgent, "the client's own User-Agent, if it sent one");
  }));

Deno.test("POST /v1/push/subscriptions: the same endpoint again is the same subscription, refreshed (200 under Prefer); another member's registration moves it to them", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("push-again");
    const alice = client(await memberOf(t, "staff", "alice"), t.tenantId);
    const bob = client(await memberOf(t, "admin", "bob"), t.tenantId);
    const browser = await browserSubscription();
    const first = await register(alice, browser, 201, { "user-agent": "first" });

    // The browser renewed its keys: the same id, the new keys, a later updatedAt.
    const renewed = await browserSubscription({ endpoint: browser.endpoint, expirationTime: Date.UTC(2028, 0, 1) });
    const refreshed = await register(alice, renewed, 200, { "user-agent": "second" });
    assert.equal(refreshed.id, first.id);
    assert.equal(refreshed.createdAt, first.createdAt);
    assert.ok(refreshed.updatedAt > first.updatedAt, "updatedAt moves");
    assert.equal(refreshed.expiresAt, "2028-01-01T00:00:00+00:00");
    assert.equal(refreshed.userAgent, "second");
    assert.deepEqual((await stored(sql, t.tenantId, browser.endpoint)).map((row) => row.p256dh), [renewed.keys.p256dh]);
    // Without Prefer: 204 with Location, where a new one answers 201.
    const again = await alice.post("/push/subscriptions", renewed);
    await expectMinimal("POST", PUSH_SUBSCRIPTIONS, again, 204);
    assert.equal((await readBack<PushSubscription>(alice, "/push/subscriptions", again, PUSH_SUBSCRIPTION)).body.id, first.id);

    // Bob signs in on the same browser: the endpoint is his now, still one row.
    const moved = await register(bob, renewed, 200);
    assert.equal(moved.id, first.id);
    assert.deepEqual((await stored(sql, t.tenantId, browser.endpoint)).map((row) => row.userId), [bob.user!.id]);
    assert.deepEqual(ids((await listSubscriptions(bob)).data), [first.id]);
    assert.deepEqual((await listSubscriptions(alice)).data, [], "no longer Alice's");
    await expectProblem("GET", PUSH_SUBSCRIPTION, await alice.get(`/push/subscriptions/${first.id}`), 404, "not-found");
    await expectProblem("DELETE", PUSH_SUBSCRIPTION, await alice.delete(`/push/subscriptions/${first.id}`), 404, "not-found");
    assert.equal(await subscriptionsOf(sql, t.tenantId, bob.user!.id), 1, "Alice's delete removed nothing");
  }));

Deno.test("POST /v1/push/subscriptions: 400 for a body that is not a browser's subscription, and nothing is stored", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("push-400");
    const browser = await browserSubscription();
    const key = await p256PublicKey();
    const withKeys = (keys: Record<string, unknown>) => ({ ...browser, keys: { ...browser.keys, ...keys } });
    // Standard base64 differs from padded base64url only where it writes + or /: a key
    // whose standard encoding has neither (one in sixteen or so) is valid written either way.
    const standardBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
    let standardKey = key;
    while (!/[+/]/.test(standardBase64(standardKey))) standardKey = await p256PublicKey();
    const cases: [string, unknown, string][] = [
      ["no body", undefined, "(body)"],
      ["no keys", { endpoint: browser.endpoint }, "keys"],
      ["no endpoint", { keys: browser.keys }, "endpoint"],
      ["an unknown field", { ...browser, userAgent: "mine" }, "userAgent"],
      ["an unknown key", withKeys({ extra: "x" }), "keys.extra"],
      ["a p256dh of 64 bytes", withKeys({ p256dh: base64url(key.subarray(0, 64)) }), "keys.p256dh"],
      ["a p256dh of 66 bytes", withKeys({ p256dh: base64url(new Uint8Array([...key, 0])) }), "keys.p256dh"],
      ["a compressed point", withKeys({ p256dh: base64url(new Uint8Array([0x02, ...key.subarray(1, 33)])) }), "keys.p256dh"],
      ["a p256dh in standard base64", withKeys({ p256dh: standardBase64(standardKey) }), "keys.p256dh"],
      ["an auth of 15 bytes", withKeys({ auth: base64url(new Uint8Array(15).fill(7)) }), "keys.auth"],
      ["an auth of 17 bytes", withKeys({ auth: base64url(new Uint8Array(17).fill(7)) }), "keys.auth"],
      ["a number for a key", withKeys({ auth: 16 }), "keys.auth"],
      ["an endpoint that is no URL", { ...browser, endpoint: "not a url" }, "endpoint"],
      ["an ftp endpoint", { ...browser, endpoint: "ftp://push.example.test/x" }, "endpoint"],
      ["an endpoint with a space", { ...browser, endpoint: "https://push.example.test/a b" }, "endpoint"],
      ["an endpoint too long", { ...browser, endpoint: `https://push.example.test/${"x".repeat(2030)}` }, "endpoint"],
      ["a negative expirationTime", { ...browser, expirationTime: -1 }, "expirationTime"],
      ["an expirationTime past 2999", { ...browser, expirationTime: Date.UTC(3000, 0, 1) }, "expirationTime"],
      ["an expirationTime as text", { ...browser, expirationTime: "2027-01-01T00:00:00Z" }, "expirationTime"],
    ];
    for (const [label, body, field] of cases) {
      await expectInvalid("POST", PUSH_SUBSCRIPTIONS, await t.ownerClient.post("/push/subscriptions", body), field, label);
    }
    const [count] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.push_subscriptions where tenant_id = ${t.tenantId}`;
    assert.equal(count!.count, 0);
  }));

Deno.test("POST /v1/push/subscriptions: 422 for a key off the P-256 curve or an endpoint no push may go to; this stack takes loopback endpoints", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("push-422");
    const api = t.ownerClient;
    const browser = await browserSubscription();
    // 65 bytes starting with 0x04, as the document asks, but (1, 1) is no point of the curve.
    const offCurve = new Uint8Array(65).fill(1);
    offCurve[0] = 0x04;
    await expectUnprocessable("POST", PUSH_SUBSCRIPTIONS,
      await api.post("/push/subscriptions", { ...browser, keys: { ...browser.keys, p256dh: base64url(offCurve) } }), "keys.p256dh");
    for (const endpoint of ["http://push.example.test/send/1", "https://203.0.113.7/send/1", "https://[2001:db8::1]/send/1",
      "https://user:secret@push.example.test/send/1"]) {
      await expectUnprocessable("POST", PUSH_SUBSCRIPTIONS, await api.post("/push/subscriptions", { ...browser, endpoint }), "endpoint", endpoint);
    }
    const [count] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.push_subscriptions where tenant_id = ${t.tenantId}`;
    assert.equal(count!.count, 0);

    // The local stack runs a stand-in for a push service on loopback, so it allows these.
    assert.equal(stack.pushAllowsLoopbackEndpoints, true, "the stack's api function allows loopback endpoints");
    const local = await register(api, { ...browser, endpoint: `http://127.0.0.1:9/push/${crypto.randomUUID()}` }, 201);
    assert.match(local.endpoint, /^http:\/\/127\.0\.0\.1:9\/push\//);
  }));

// ---------------------------------------------------------------- list, read, delete

Deno.test("GET /v1/push/subscriptions: a member's own browsers in the tenant, newest first, paged", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("push-list");
    const staff = client(await memberOf(t, "staff"), t.tenantId);
    const mine: PushSubscription[] = [];
    for (let i = 0; i < 3; i++) mine.push(await register(staff, await browserSubscription(), 201));
    const owners = await register(t.ownerClient, await browserSubscription(), 201);

    const all = await expectPaging((query) => listSubscriptions(staff, query), ids(mine).reverse(),
      ["?limit=2", "?limit=2&offset=2", "?offset=3", "?limit=1&offset=7"]);
    assert.deepEqual(all.data, [...mine].reverse(), "as each was registered");
    assert.deepEqual((await listSubscriptions(t.ownerClient)).data, [owners], "the owner sees only their own");
    for (const [query, field] of [["limit=0", "limit"], ["offset=x", "offset"], ["userId=" + UNKNOWN_ID, "userId"]]) {
      await expectInvalid("GET", PUSH_SUBSCRIPTIONS, await staff.get(`/push/subscriptions?${query}`), field!, query);
    }
  }));

Deno.test("DELETE /v1/push/subscriptions/{id}: 204 for one's own, then it is gone; another member's, an unknown and a malformed id are the same 404, and theirs stays", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("push-delete");
    const alice = client(await memberOf(t, "staff", "alice"), t.tenantId);
    const bob = client(await memberOf(t, "staff", "bob"), t.tenantId);
    const alices = await register(alice, await browserSubscription(), 201);
    const bobs = await register(bob, await browserSubscription(), 201);

    const others = await expectProblem("DELETE", PUSH_SUBSCRIPTION, await alice.delete(`/push/subscriptions/${bobs.id}`), 404, "not-found");
    const unknown = await expectProblem("DELETE", PUSH_SUBSCRIPTION, await alice.delete(`/push/subscriptions/${UNKNOWN_ID}`), 404, "not-found");
    const malformed = await expectProblem("DELETE", PUSH_SUBSCRIPTION, await alice.delete(`/push/subscriptions/${MALFORMED_ID}`), 404, "not-found");
    assert.deepEqual(others, unknown, "another member's subscription answers as an unknown one");
    assert.deepEqual(malformed, unknown);
    const read = await expectProblem("GET", PUSH_SUBSCRIPTION, await alice.get(`/push/subscriptions/${bobs.id}`), 404, "not-found");
    assert.deepEqual(read, await expectProblem("GET", PUSH_SUBSCRIPTION, await alice.get(`/push/subscriptions/${UNKNOWN_ID}`), 404));
    // The owner may not remove a member's browser either.
    await expectProblem("DELETE", PUSH_SUBSCRIPTION, await t.ownerClient.delete(`/push/subscriptions/${bobs.id}`), 404, "not-found");
    assert.equal(await subscriptionsOf(sql, t.tenantId, bob.user!.id), 1, "Bob's subscription stays");

    assert.equal(await expectStatus("DELETE", PUSH_SUBSCRIPTION, await alice.delete(`/push/subscriptions/${alices.id}`), 204), undefined);
    await expectProblem("GET", PUSH_SUBSCRIPTION, await alice.get(`/push/subscriptions/${alices.id}`), 404, "not-found");
    await expectProblem("DELETE", PUSH_SUBSCRIPTION, await alice.delete(`/push/subscriptions/${alices.id}`), 404, "not-found");
    assert.equal(await subscriptionsOf(sql, t.tenantId, alice.user!.id), 0);
    assert.deepEqual(ids((await listSubscriptions(bob)).data), [bobs.id]);
  }));

// ---------------------------------------------------------------- tenants and members

Deno.test("push subscriptions across tenants: each tenant has its own, one browser may be registered in both; a non-member gets 403", () =>
  withFixture(async ({ sql, tenant, user }) => {
    const a = await tenant("push-tenant-a");
    const b = await tenant("push-tenant-b");
    const both = a.owner;
    await expectStatus("POST", "/v1/tenants/{tenantId}/members",
      await b.ownerClient.post(`/tenants/${b.tenantId}/members`, { email: both.email, role: "staff" }), 201);
    const inB = client(both, b.tenantId);
    const browser = await browserSubscription();
    const ofA = await register(a.ownerClient, browser, 201);
    const ofB = await register(inB, browser, 201);
    assert.notEqual(ofA.id, ofB.id, "one subscription per tenant");
    assert.deepEqual(ids((await listSubscriptions(a.ownerClient)).data), [ofA.id]);
    assert.deepEqual(ids((await listSubscriptions(inB)).data), [ofB.id]);
    await expectProblem("GET", PUSH_SUBSCRIPTION, await inB.get(`/push/subscriptions/${ofA.id}`), 404, "not-found");
    await expectProblem("DELETE", PUSH_SUBSCRIPTION, await inB.delete(`/push/subscriptions/${ofA.id}`), 404, "not-found");
    assert.equal(await subscriptionsOf(sql, a.tenantId, both.id), 1, "A's stays");

    const outsiders: Client[] = [client(await user("push-stranger"), a.tenantId), client(b.owner, a.tenantId)];
    for (const outsider of outsiders) {
      await expectProblem("GET", PUSH_SUBSCRIPTIONS, await outsider.get("/push/subscriptions"), 403, "forbidden");
      await expectProblem("POST", PUSH_SUBSCRIPTIONS, await outsider.post("/push/subscriptions", await browserSubscription()), 403, "forbidden");
      // Registering a member's endpoint from outside the tenant does not take it.
      await expectProblem("POST", PUSH_SUBSCRIPTIONS, await outsider.post("/push/subscriptions", browser), 403, "forbidden");
      await expectProblem("GET", PUSH_SUBSCRIPTION, await outsider.get(`/push/subscriptions/${ofA.id}`), 403, "forbidden");
      await expectProblem("DELETE", PUSH_SUBSCRIPTION, await outsider.delete(`/push/subscriptions/${ofA.id}`), 403, "forbidden");
    }
    assert.deepEqual((await stored(sql, a.tenantId, browser.endpoint)).map((row) => row.userId), [both.id]);
  }));

Deno.test("a member's push subscriptions and inbox go with their membership, and a member added again starts with neither", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("push-membership");
    const leaver = await memberOf(t, "staff", "leaver");
    const api = client(leaver, t.tenantId);
    await register(api, await browserSubscription(), 201);
    await register(api, await browserSubscription(), 201);
    await deliverToInbox(sql, t.tenantId, leaver.id);
    const stayer = await memberOf(t, "staff", "stayer");
    await register(client(stayer, t.tenantId), await browserSubscription(), 201);

    await expectStatus("DELETE", "/v1/tenants/{tenantId}/members/{userId}",
      await t.ownerClient.delete(`/tenants/${t.tenantId}/members/${leaver.id}`), 204);
    assert.equal(await subscriptionsOf(sql, t.tenantId, leaver.id), 0, "the subscriptions went");
    assert.deepEqual(await storedMessages(sql, t.tenantId, leaver.id), { unread: 0, read: 0 }, "the inbox went");
    assert.equal(await subscriptionsOf(sql, t.tenantId, stayer.id), 1, "another member's stay");
    await expectProblem("GET", PUSH_SUBSCRIPTIONS, await api.get("/push/subscriptions"), 403, "forbidden");

    await expectStatus("POST", "/v1/tenants/{tenantId}/members",
      await t.ownerClient.post(`/tenants/${t.tenantId}/members`, { email: leaver.email, role: "staff" }), 201);
    assert.deepEqual((await listSubscriptions(api)).data, []);
  }));

Deno.test("push: 401 without a token and after the session ended", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("push-401");
    const browser = await browserSubscription();
    const mine = await register(t.ownerClient, await browserSubscription(), 201);
    const calls: RouteCall[] = [
      ["GET", PUSH_PUBLIC_KEY, (api) => api.get("/push/public-key")],
      ["GET", PUSH_SUBSCRIPTIONS, (api) => api.get("/push/subscriptions")],
      ["POST", PUSH_SUBSCRIPTIONS, (api) => api.post("/push/subscriptions", browser)],
      ["GET", PUSH_SUBSCRIPTION, (api) => api.get(`/push/subscriptions/${mine.id}`)],
      ["DELETE", PUSH_SUBSCRIPTION, (api) => api.delete(`/push/subscriptions/${mine.id}`)],
    ];
    await expectSignedInOnly(calls, t.tenantId, t.owner, t.ownerClient);
    assert.equal(await subscriptionsOf(sql, t.tenantId, t.owner.id), 1, "nothing was registered or removed");
  }));
