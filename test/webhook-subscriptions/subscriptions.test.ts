// Webhook subscriptions through the gateway: owners and admins create, list, read, change,
// disable and delete them, rotate their secrets and send test events; staff and other
// tenants see none of it. The secret is in the create's and the rotation's answers only.
// Every answer is checked against the served contract. (The local stack lets subscriptions
// name loopback, where its receiver runs; test/webhook-delivery/endpoint.unit.test.ts shows
// loopback refused where that is not allowed.)
import assert from "node:assert/strict";
import {
  type Client,
  client,
  expectProblem,
  expectSignedInOnly,
  expectStatus,
  listPage,
  representation,
  type RouteCall,
  type Schemas,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";

type Subscription = Schemas["WebhookSubscription"];
type WithSecret = Schemas["WebhookSubscriptionWithSecret"];

const SUBSCRIPTIONS = "/v1/webhook-subscriptions";
const SUBSCRIPTION = "/v1/webhook-subscriptions/{id}";
const ROTATE = "/v1/webhook-subscriptions/{id}/rotate-secret";
const TEST = "/v1/webhook-subscriptions/{id}/test";
const DELIVERIES = "/v1/webhook-subscriptions/{id}/deliveries";
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

async function subscribe(api: Client, body: Record<string, unknown>): Promise<WithSecret> {
  return await expectStatus<WithSecret>("POST", SUBSCRIPTIONS, await api.post("/webhook-subscriptions", body), 201);
}

Deno.test("POST /v1/webhook-subscriptions: 201 with the secret, once; reads, lists and the database never show it", () =>
  withFixture(async ({ sql, tenant, memberOf }) => {
    const t = await tenant("hooks-create");
    const response = await t.ownerClient.post("/webhook-subscriptions", {
      url: "https://channel.example.com/hooks", description: "channel manager", eventTypes: ["reservation.created"],
    });
    const created = await expectStatus<WithSecret>("POST", SUBSCRIPTIONS, response, 201);
    assert.match(created.secret, SECRET);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.headers.get("location"), `webhook-subscriptions/${created.id}`, "relative to /v1/webhook-subscriptions");
    assert.deepEqual(
      { url: created.url, eventTypes: created.eventTypes, propertyIds: created.propertyIds, enabled: created.enabled },
      { url: "https://channel.example.com/hooks", eventTypes: ["reservation.created"], propertyIds: [], enabled: true },
    );
    const read = await expectStatus<Subscription>("GET", SUBSCRIPTION, await t.ownerClient.get(`/webhook-subscriptions/${created.id}`), 200);
    assert.equal("secret" in read, false, "a read has no secret");
    const page = await listPage<Subscription>(t.ownerClient, SUBSCRIPTIONS);
    assert.deepEqual(page.data.map((row) => row.id), [created.id]);
    assert.equal(page.data.some((row) => "secret" in row), false, "a list has no secret");
    const [row] = await sql<{ secret: string }[]>`select secret from public.webhook_subscriptions where id = ${created.id}`;
    assert.equal(row?.secret, created.secret, "the secret answered is the one stored");

    const admin = client(await memberOf(t, "admin"), t.tenantId);
    await subscribe(admin, { url: "https://accounting.example.com/in" });
    assert.equal((await listPage<Subscription>(admin, SUBSCRIPTIONS)).data.length, 2, "an admin manages them too");
  }));

Deno.test("POST /v1/webhook-subscriptions: 422 for a URL that may not receive webhooks or another tenant's property; 400 for an unknown event type", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("hooks-refused");
    const other = await tenant("hooks-refused-other");
    for (const url of [
      "http://example.com/plain-http", "https://user:pass@example.com/", "https://10.0.0.5/hooks", "https://192.168.1.2/",
      "https://169.254.169.254/latest/meta-data", "https://[fd00::1]/", "https://printer.local/", "https://intranet/",
      "ftp://example.com/", "not a url",
    ]) {
      const problem = await expectProblem("POST", SUBSCRIPTIONS, await t.ownerClient.post("/webhook-subscriptions", { url }), 422, "unprocessable");
      assert.equal(problem.errors?.[0]?.path, "url", url);
    }
    const property = await expectStatus<Schemas["Property"]>("POST", "/v1/properties",
      await other.ownerClient.post("/properties", { name: "Elsewhere", timezone: "Europe/Lisbon", currency: "EUR" }, representation), 201);
    const problem = await expectProblem("POST", SUBSCRIPTIONS,
      await t.ownerClient.post("/webhook-subscriptions", { url: "https://ok.example.com/", propertyIds: [property.id] }), 422, "unknown-reference");
    assert.equal(problem.errors?.[0]?.path, "propertyIds");
    await expectProblem("POST", SUBSCRIPTIONS,
      await t.ownerClient.post("/webhook-subscriptions", { url: "https://ok.example.com/", eventTypes: ["reservation.paid"] }), 400, "validation");
    await expectProblem("POST", SUBSCRIPTIONS,
      await t.ownerClient.post("/webhook-subscriptions", { url: "https://ok.example.com/", eventTypes: ["webhook.test"] }), 400, "validation");
    assert.equal((await listPage<Subscription>(t.ownerClient, SUBSCRIPTIONS)).data.length, 0, "nothing was created");
  }));

Deno.test("PATCH /v1/webhook-subscriptions/{id}: disable records why and when, enable clears it; DELETE removes it", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("hooks-patch");
    const created = await subscribe(t.ownerClient, { url: "https://pms-sync.example.com/" });
    const disabled = await expectStatus<Subscription>("PATCH", SUBSCRIPTION,
      await t.ownerClient.patch(`/webhook-subscriptions/${created.id}`, { enabled: false }, representation), 200);
    assert.equal(disabled.enabled, false);
    assert.equal(disabled.disabledReason, "manual");
    assert.notEqual(disabled.disabledAt, null);
    const enabled = await expectStatus<Subscription>("PATCH", SUBSCRIPTION,
      await t.ownerClient.patch(`/webhook-subscriptions/${created.id}`, { enabled: true, description: "sync" }, representation), 200);
    assert.deepEqual([enabled.enabled, enabled.disabledReason, enabled.disabledAt, enabled.description], [true, null, null, "sync"]);
    const refused = await expectProblem("PATCH", SUBSCRIPTION,
      await t.ownerClient.patch(`/webhook-subscriptions/${created.id}`, { url: "https://172.16.0.1/" }), 422, "unprocessable");
    assert.equal(refused.errors?.[0]?.path, "url");
    const response = await t.ownerClient.delete(`/webhook-subscriptions/${created.id}`);
    await expectStatus("DELETE", SUBSCRIPTION, response, 204);
    await expectProblem("GET", SUBSCRIPTION, await t.ownerClient.get(`/webhook-subscriptions/${created.id}`), 404, "not-found");
  }));

Deno.test("POST /v1/webhook-subscriptions/{id}/rotate-secret: a new secret, answered once; the old one signs beside it for the overlap", () =>
  withFixture(async ({ sql, tenant }) => {
    const t = await tenant("hooks-rotate");
    const created = await subscribe(t.ownerClient, { url: "https://locks.example.com/" });
    const response = await t.ownerClient.post(`/webhook-subscriptions/${created.id}/rotate-secret`, { overlapHours: 2 });
    const rotated = await expectStatus<WithSecret>("POST", ROTATE, response, 200);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.match(rotated.secret, SECRET);
    assert.notEqual(rotated.secret, created.secret);
    const expires = Date.parse(rotated.previousSecretExpiresAt ?? "");
    assert.ok(Math.abs(expires - (Date.now() + 2 * 3600_000)) < 60_000, "the old secret signs for two more hours");
    const [row] = await sql<{ previous: string }[]>`select previous_secret as previous from public.webhook_subscriptions where id = ${created.id}`;
    assert.equal(row?.previous, created.secret);
    await expectProblem("POST", ROTATE,
      await t.ownerClient.post(`/webhook-subscriptions/${created.id}/rotate-secret`, { overlapHours: 200 }), 400, "validation");
    await expectProblem("POST", ROTATE, await t.ownerClient.post(`/webhook-subscriptions/${UNKNOWN_ID}/rotate-secret`, {}), 404, "not-found");
  }));

Deno.test("POST /v1/webhook-subscriptions/{id}/test: 202 with the queued delivery, listed under the subscription", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("hooks-test");
    const created = await subscribe(t.ownerClient, { url: "https://test.example.com/", enabled: false });
    const response = await t.ownerClient.post(`/webhook-subscriptions/${created.id}/test`, {});
    const queued = await expectStatus<Schemas["WebhookDeliveryQueued"]>("POST", TEST, response, 202);
    const page = await expectStatus<{ data: Schemas["WebhookDelivery"][] }>("GET", DELIVERIES,
      await t.ownerClient.get(`/webhook-subscriptions/${created.id}/deliveries`), 200);
    assert.deepEqual(page.data.map((row) => [row.id, row.eventType, row.status]), [[queued.deliveryId, "webhook.test", "pending"]]);
    await expectProblem("POST", TEST, await t.ownerClient.post(`/webhook-subscriptions/${UNKNOWN_ID}/test`, {}), 404, "not-found");
  }));

Deno.test("webhook subscriptions: staff are refused every route; another tenant's owner finds none of them", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("hooks-roles");
    const other = await tenant("hooks-roles-other");
    const created = await subscribe(t.ownerClient, { url: "https://roles.example.com/" });
    const staff = client(await memberOf(t, "staff"), t.tenantId);
    const calls: RouteCall[] = [
      ["GET", SUBSCRIPTIONS, (api) => api.get("/webhook-subscriptions")],
      ["POST", SUBSCRIPTIONS, (api) => api.post("/webhook-subscriptions", { url: "https://staff.example.com/" })],
      ["GET", SUBSCRIPTION, (api) => api.get(`/webhook-subscriptions/${created.id}`)],
      ["PATCH", SUBSCRIPTION, (api) => api.patch(`/webhook-subscriptions/${created.id}`, { enabled: false })],
      ["DELETE", SUBSCRIPTION, (api) => api.delete(`/webhook-subscriptions/${created.id}`)],
      ["POST", ROTATE, (api) => api.post(`/webhook-subscriptions/${created.id}/rotate-secret`, {})],
      ["POST", TEST, (api) => api.post(`/webhook-subscriptions/${created.id}/test`, {})],
      ["GET", DELIVERIES, (api) => api.get(`/webhook-subscriptions/${created.id}/deliveries`)],
    ];
    for (const [method, template, send] of calls) await expectProblem(method, template, await send(staff), 403, "forbidden");
    for (const [method, template, send] of calls.slice(2)) {
      await expectProblem(method, template, await send(other.ownerClient), 404, "not-found");
    }
    assert.equal((await listPage<Subscription>(other.ownerClient, SUBSCRIPTIONS)).data.length, 0);
    await expectSignedInOnly(calls, t.tenantId, t.owner, t.ownerClient);
  }));
