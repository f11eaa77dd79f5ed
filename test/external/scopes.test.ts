// What a key reaches (its properties: some, or all of its tenant's) and what it may do
// there (its scopes): the database keeps it to its properties, the API refuses a route
// outside its scopes with 403 insufficient-scope, before anything is read or written.
import assert from "node:assert/strict";
import { expectInvalid, expectProblem, expectStatus, expectUnprocessable, type Page, withFixture } from "../support/api.ts";
import { createStay, type Reservation } from "../support/domain.ts";
import { type ApiKey, external, issueApiKey } from "../support/integration.ts";

const LIST = "/v1/external/reservations";
const ONE = "/v1/external/reservations/{id}";
const PAY = "/v1/external/reservations/{id}/payments";
const KEYS = "/v1/api-keys";

Deno.test("a key of several properties reads each of theirs and no other's; a key of all reads those added after it", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("integration");
    const b = await tenant("other");
    const [north, south, west] = [await createStay(a.ownerClient), await createStay(a.ownerClient), await createStay(a.ownerClient)];
    const theirs = await createStay(b.ownerClient);
    const both = await issueApiKey(a.ownerClient, north.property.id, { propertyId: undefined, propertyIds: [north.property.id, south.property.id] });
    assert.deepEqual([both.propertyId, both.allProperties, [...both.propertyIds].sort()],
      [null, false, [north.property.id, south.property.id].sort()]);
    const everything = await issueApiKey(a.ownerClient, north.property.id, { propertyId: undefined, allProperties: true });
    assert.deepEqual([everything.propertyId, everything.propertyIds, everything.allProperties], [null, [], true]);

    const ids = async (key: string, query = "") =>
      (await expectStatus<Page<Reservation>>("GET", LIST, await external("GET", `/reservations${query}`, key), 200)).data
        .map((row) => row.id).sort();
    assert.deepEqual(await ids(both.secret), [north.reservation.id, south.reservation.id].sort());
    assert.deepEqual(await ids(both.secret, `?propertyId=${south.property.id}`), [south.reservation.id]);
    assert.deepEqual(await ids(both.secret, `?propertyId=${west.property.id}`), [], "a property the key does not act for lists nothing");
    assert.deepEqual(await ids(both.secret, `?propertyId=${theirs.property.id}`), []);
    const missing = await expectProblem("GET", ONE, await external("GET", `/reservations/${west.reservation.id}`, both.secret), 404, "not-found");
    assert.match(missing.detail, /reservation/);

    // A property made after the key is one of "all".
    const later = await createStay(a.ownerClient);
    assert.deepEqual(await ids(everything.secret),
      [north.reservation.id, south.reservation.id, west.reservation.id, later.reservation.id].sort());
    await expectProblem("GET", ONE, await external("GET", `/reservations/${theirs.reservation.id}`, everything.secret), 404, "not-found");
  }));

Deno.test("a route outside the key's scopes is 403 naming the scope, and writes nothing; a key's default scopes are today's", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("integration");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const property = stay.property.id;
    const plain = await issueApiKey(a.ownerClient, property);
    assert.deepEqual(plain.scopes, ["payments:write", "reservations:read"], "a key made without scopes may do what keys always could");
    const ariOnly = await issueApiKey(a.ownerClient, property, { scopes: ["ari:read"] });
    const readOnly = await issueApiKey(a.ownerClient, property, { scopes: ["reservations:read"] });
    const payOnly = await issueApiKey(a.ownerClient, property, { scopes: ["payments:write"] });
    const payment = { amount: 1000, currency: stay.ratePlan.currency, method: "card", externalReference: "scope-1" };

    const refused = async (response: Response, method: string, path: string, scope: string) => {
      const problem = await expectProblem(method, path, response, 403, "insufficient-scope");
      assert.equal((problem as Record<string, unknown>).requiredScope, scope);
      assert.match(problem.detail, new RegExp(scope));
      assert.ok(response.headers.get("ratelimit-policy"), "a refused request still counts and says so");
    };
    await refused(await external("GET", "/reservations", ariOnly.secret), "GET", LIST, "reservations:read");
    await refused(await external("GET", `/reservations/${stay.reservation.id}`, payOnly.secret), "GET", ONE, "reservations:read");
    await refused(await external("POST", `/reservations/${stay.reservation.id}/payments`, readOnly.secret, { body: payment }), "POST", PAY,
      "payments:write");
    await refused(await external("POST", `/reservations/${stay.reservation.id}/payments`, ariOnly.secret, { body: payment }), "POST", PAY,
      "payments:write");
    const [recorded] = await sql<{ count: number }[]>`select count(*)::int as count from public.payments where external_reference = 'scope-1'`;
    assert.equal(recorded?.count, 0, "nothing recorded for a key without payments:write");

    // The scope a route needs is all it needs: a payments-only key records on a stay it can see.
    await expectStatus("POST", PAY, await external("POST", `/reservations/${stay.reservation.id}/payments`, payOnly.secret, { body: payment }), 201);
    await expectStatus("GET", ONE, await external("GET", `/reservations/${stay.reservation.id}`, readOnly.secret), 200);
  }));

Deno.test("a key names its properties one way, from its own tenant, and keeps its properties and scopes", () =>
  withFixture(async ({ sql, tenant }) => {
    const a = await tenant("keys");
    const b = await tenant("other");
    const stay = await createStay(a.ownerClient);
    const theirs = await createStay(b.ownerClient);
    const post = async (body: Record<string, unknown>) => await a.ownerClient.post("/api-keys", { name: "Channel manager", ...body });
    const property = stay.property.id;

    await expectUnprocessable("POST", KEYS, await post({}), "propertyIds");
    await expectUnprocessable("POST", KEYS, await post({ propertyId: property, allProperties: true }), "propertyIds");
    await expectUnprocessable("POST", KEYS, await post({ propertyId: property, propertyIds: [property] }), "propertyIds");
    await expectInvalid("POST", KEYS, await post({ propertyIds: [] }), "propertyIds");
    await expectInvalid("POST", KEYS, await post({ allProperties: false }), "allProperties");
    await expectInvalid("POST", KEYS, await post({ propertyId: property, scopes: [] }), "scopes");
    await expectInvalid("POST", KEYS, await post({ propertyId: property, scopes: ["reservations:delete"] }), "scopes.0");
    await expectProblem("POST", KEYS, await post({ propertyIds: [property, theirs.property.id] }), 422, "unknown-reference");
    const [made] = await sql<{ keys: number }[]>`select count(*)::int as keys from public.api_keys where tenant_id = ${a.tenantId}`;
    assert.equal(made?.keys, 0, "a refused key leaves nothing behind");

    const key = await expectStatus<ApiKey>("POST", KEYS, await post({
      propertyIds: [property, property], scopes: ["reservations:write", "reservations:read", "reservations:read"],
    }), 201);
    assert.deepEqual([key.propertyIds, key.propertyId, key.scopes], [[property], property, ["reservations:read", "reservations:write"]],
      "repeated properties and scopes count once");
  }));
