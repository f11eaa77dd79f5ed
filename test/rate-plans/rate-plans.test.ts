// Rate plans end to end through the gateway: every route of src/rate-plans/handlers.ts,
// its documented errors, the stay rules (in the body and against the stored row), who
// may write, and what a reservation on a plan does to deleting it. Every response is
// checked against the served OpenAPI document.
// (The tenant header, 401 and non-member 403 on every route are tested elsewhere, once.)
import assert from "node:assert/strict";
import { addMember, type Client, client, expectInvalid, expectMinimal, expectPaging, expectProblem, expectStatus, expectUnprocessable, listPage, readBack, readOne, representation, UNKNOWN_ID, withFixture } from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createRatePlan,
  createReservation,
  type RatePlan,
  type Reservation,
} from "../support/domain.ts";

const RATE_PLANS = "/v1/rate-plans";
const RATE_PLAN = "/v1/rate-plans/{id}";

// Not a UUID, and the code of plans these tests create: a code never reads as an id.
const MALFORMED_ID = "BAR";

const listPlans = (api: Client, query = "") => listPage<RatePlan>(api, RATE_PLANS, query);
const readPlan = (api: Client, id: string) => readOne<RatePlan>(api, RATE_PLAN, { id });

// By property, then code, then id: the list's documented order (the database collates bytewise).
function inListOrder(plans: RatePlan[]): string[] {
  return [...plans].sort((x, y) =>
    x.propertyId < y.propertyId ? -1 : x.propertyId > y.propertyId ? 1 : x.code < y.code ? -1 : x.code > y.code ? 1 : 0
  ).map((p) => p.id);
}

function without<T extends Record<string, unknown>>(value: T, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
}

// ---------------------------------------------------------------- POST /v1/rate-plans

Deno.test("POST /v1/rate-plans with return=representation: 201, the plan, a relative Location and the ETag GET gives", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-create");
    const property = await createProperty(t.ownerClient);
    const input = {
      propertyId: property.id,
      name: "Weekly saver",
      code: "WEEK_7-A",
      currency: "USD",
      nightlyPrice: 9950,
      minStay: 7,
      maxStay: 28,
      cancellationPolicy: "strict",
      freeCancellationHours: 72,
      active: false,
    };
    const response = await t.ownerClient.post("/rate-plans", input, representation);
    const created = await expectStatus<RatePlan>("POST", RATE_PLANS, response, 201);
    // A plan for every room type of the property, without extra amounts or a base plan.
    assert.deepEqual(without(created, "id", "createdAt", "updatedAt"), {
      ...input, roomTypeId: null, extraAdultPrice: 0, extraChildPrice: 0, derivedFromId: null, derivedPercent: null, derivedAmount: null,
    });
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(created.createdAt, created.updatedAt);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    const raw = response.headers.get("location")!;
    assert.doesNotMatch(raw, /^([a-z]+:|\/)/i, `a relative Location, got ${raw}`);
    assert.match(response.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);
    const { location, body } = await readBack(t.ownerClient, "/rate-plans", response, RATE_PLAN);
    assert.equal(location, `/rate-plans/${created.id}`);
    assert.deepEqual(body, created);
  }));

Deno.test("POST /v1/rate-plans without Prefer: 201, the new id, Location and ETag; the defaults are applied", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-create-min");
    const property = await createProperty(t.ownerClient);
    const body = { propertyId: property.id, name: "  Best available ", code: "BAR", currency: "EUR", nightlyPrice: 0 };
    const response = await t.ownerClient.post("/rate-plans", body);
    const { location } = await expectMinimal("POST", RATE_PLANS, response, 201);
    assert.doesNotMatch(location!, /^([a-z]+:|\/)/i, `a relative Location, got ${location}`);
    const { location: path, body: plan } = await readBack<RatePlan>(t.ownerClient, "/rate-plans", response, RATE_PLAN);
    assert.equal(path, `/rate-plans/${plan.id}`);
    assert.deepEqual(without(plan, "id", "createdAt", "updatedAt"), {
      propertyId: property.id,
      name: "Best available",
      code: "BAR",
      currency: "EUR",
      nightlyPrice: 0,
      minStay: 1,
      maxStay: null,
      cancellationPolicy: "flexible",
      freeCancellationHours: null,
      active: true,
      roomTypeId: null,
      extraAdultPrice: 0,
      extraChildPrice: 0,
      derivedFromId: null,
      derivedPercent: null,
      derivedAmount: null,
    });
  }));

Deno.test("POST /v1/rate-plans: 400 for missing, unknown or invalid fields, and nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-create400");
    const property = await createProperty(t.ownerClient);
    const valid = { propertyId: property.id, name: "Best available", code: "BAR", currency: "EUR", nightlyPrice: 12000 };
    const cases: [unknown, string][] = [
      [without(valid, "propertyId"), "propertyId"],
      [without(valid, "name"), "name"],
      [without(valid, "code"), "code"],
      [without(valid, "currency"), "currency"],
      [{ ...valid, propertyId: "property-1" }, "propertyId"],
      [{ ...valid, name: "  " }, "name"],
      [{ ...valid, name: "x".repeat(201) }, "name"],
      [{ ...valid, code: "bar" }, "code"],
      [{ ...valid, code: "-BAR" }, "code"],
      [{ ...valid, code: "BAR 1" }, "code"],
      [{ ...valid, code: "B".repeat(33) }, "code"],
      [{ ...valid, code: "" }, "code"],
      [{ ...valid, currency: "eur" }, "currency"],
      [{ ...valid, currency: "EURO" }, "currency"],
      [{ ...valid, currency: null }, "currency"],
      [{ ...valid, nightlyPrice: -1 }, "nightlyPrice"],
      [{ ...valid, nightlyPrice: 120.5 }, "nightlyPrice"],
      [{ ...valid, nightlyPrice: "12000" }, "nightlyPrice"],
      [{ ...valid, minStay: 0 }, "minStay"],
      [{ ...valid, minStay: 366 }, "minStay"],
      [{ ...valid, minStay: null }, "minStay"],
      [{ ...valid, maxStay: 0 }, "maxStay"],
      [{ ...valid, maxStay: 366 }, "maxStay"],
      [{ ...valid, cancellationPolicy: "lenient" }, "cancellationPolicy"],
      [{ ...valid, freeCancellationHours: -1 }, "freeCancellationHours"],
      [{ ...valid, freeCancellationHours: 8761 }, "freeCancellationHours"],
      [{ ...valid, active: "yes" }, "active"],
      [{ ...valid, active: null }, "active"],
      [{ ...valid, discount: 10 }, "discount"],
      [{ ...valid, id: UNKNOWN_ID }, "id"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", RATE_PLANS, await t.ownerClient.post("/rate-plans", body), path, JSON.stringify(body));
    }
    await expectProblem("POST", RATE_PLANS, await t.ownerClient.post("/rate-plans"), 400, "validation");
    // A nightly price is required of a plan that derives from none: a rule between fields.
    const unpriced = await expectProblem("POST", RATE_PLANS, await t.ownerClient.post("/rate-plans", without(valid, "nightlyPrice")), 422, "unprocessable");
    assert.deepEqual(unpriced.errors?.map((error) => error.path), ["nightlyPrice"]);
    assert.equal((await listPlans(t.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/rate-plans: the stay rules are 422 with the field's path; their edge cases are accepted", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-rules");
    const property = await createProperty(t.ownerClient);
    const valid = { propertyId: property.id, name: "Rules", currency: "EUR", nightlyPrice: 10000 };
    const refused: [Record<string, unknown>, string, RegExp][] = [
      [{ minStay: 3, maxStay: 2 }, "maxStay", /maxStay must be at least minStay/],
      [{ minStay: 365, maxStay: 1 }, "maxStay", /maxStay must be at least minStay/],
      [{ cancellationPolicy: "non_refundable", freeCancellationHours: 24 }, "freeCancellationHours", /non_refundable/],
      [{ cancellationPolicy: "non_refundable", freeCancellationHours: 0 }, "freeCancellationHours", /non_refundable/],
    ];
    for (const [fields, path, message] of refused) {
      const response = await t.ownerClient.post("/rate-plans", { ...valid, code: "RULE", ...fields });
      const problem = await expectProblem("POST", RATE_PLANS, response, 422, "unprocessable");
      const error = problem.errors?.find((e) => e.path === path);
      assert.ok(error, `${JSON.stringify(fields)}: ${JSON.stringify(problem.errors)}`);
      assert.match(error.message, message);
    }
    assert.equal((await listPlans(t.ownerClient)).pagination.total, 0, "nothing was created");

    const accepted: Record<string, unknown>[] = [
      { minStay: 3, maxStay: 3 },
      { minStay: 3, maxStay: null },
      { maxStay: 1 },
      { cancellationPolicy: "non_refundable" },
      { cancellationPolicy: "non_refundable", freeCancellationHours: null },
      { cancellationPolicy: "flexible", freeCancellationHours: 0 },
      { freeCancellationHours: 8760 },
    ];
    for (const [index, fields] of accepted.entries()) {
      const plan = await createRatePlan(t.ownerClient, property.id, { code: `OK${index}`, ...fields });
      for (const [key, value] of Object.entries(fields)) assert.equal(plan[key as keyof RatePlan], value, `${key} of ${JSON.stringify(fields)}`);
    }
  }));

Deno.test("POST /v1/rate-plans: 400 for a currency the document does not list, 422 for a property not in the tenant", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-create422");
    const other = await tenant("plan-create422-other");
    const property = await createProperty(t.ownerClient);
    const theirs = await createProperty(other.ownerClient);
    const body = { propertyId: property.id, name: "Nowhere", code: "NOPE", currency: "EUR", nightlyPrice: 100 };

    for (const currency of ["ZZZ", "XXX"]) {
      await expectInvalid("POST", RATE_PLANS, await t.ownerClient.post("/rate-plans", { ...body, currency }), "currency", currency);
    }
    for (const propertyId of [UNKNOWN_ID, theirs.id]) {
      const response = await t.ownerClient.post("/rate-plans", { ...body, propertyId });
      const problem = await expectProblem("POST", RATE_PLANS, response, 422, "unknown-reference");
      assert.match(problem.detail, /does not exist in this tenant/);
    }
    assert.equal((await listPlans(t.ownerClient)).pagination.total, 0);
    assert.equal((await listPlans(other.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/rate-plans: 409 for a code the property already has; another property or tenant may use it", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("plan-dup-a");
    const b = await tenant("plan-dup-b");
    const property = await createProperty(a.ownerClient);
    const second = await createProperty(a.ownerClient);
    const first = await createRatePlan(a.ownerClient, property.id, { code: "BAR" });

    const again = await a.ownerClient.post("/rate-plans", {
      propertyId: property.id, name: "Another name", code: "BAR", currency: "GBP", nightlyPrice: 1,
    });
    assert.match((await expectProblem("POST", RATE_PLANS, again, 409, "already-exists")).detail, /already has a rate plan with this code/);
    assert.deepEqual((await listPlans(a.ownerClient)).data, [first]);

    // Names are not unique; codes are, per property.
    assert.equal((await createRatePlan(a.ownerClient, property.id, { code: "BAR2", name: first.name })).name, first.name);
    assert.equal((await createRatePlan(a.ownerClient, second.id, { code: "BAR" })).code, "BAR");
    const theirs = await createProperty(b.ownerClient);
    assert.equal((await createRatePlan(b.ownerClient, theirs.id, { code: "BAR" })).code, "BAR");
  }));

// ---------------------------------------------------------------- GET /v1/rate-plans

Deno.test("GET /v1/rate-plans: ordered by property and code, paged with a total, readable by staff", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("plan-list");
    const other = await tenant("plan-list-other");
    const staff = await memberOf(t, "staff");
    const p1 = await createProperty(t.ownerClient);
    const p2 = await createProperty(t.ownerClient);
    const plans = [
      await createRatePlan(t.ownerClient, p1.id, { code: "NR", name: "A" }),
      await createRatePlan(t.ownerClient, p2.id, { code: "BAR", name: "B" }),
      await createRatePlan(t.ownerClient, p1.id, { code: "BAR", name: "C" }),
      await createRatePlan(t.ownerClient, p2.id, { code: "CORP", name: "D" }),
      await createRatePlan(t.ownerClient, p1.id, { code: "BB", name: "E" }),
    ];
    const theirs = await createProperty(other.ownerClient);
    await createRatePlan(other.ownerClient, theirs.id, { code: "AAA" });
    const order = inListOrder(plans);

    const api = client(staff, t.tenantId);
    const all = await expectPaging((query) => listPlans(api, query), order, ["?limit=2&offset=2", "?limit=3&offset=3", "?offset=7"]);
    for (const listed of all.data) assert.deepEqual(listed, (await readPlan(api, listed.id)).body);
  }));

Deno.test("GET /v1/rate-plans: filters by propertyId and active=true/false", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-filter");
    const other = await tenant("plan-filter-other");
    const p1 = await createProperty(t.ownerClient);
    const p2 = await createProperty(t.ownerClient);
    const on1 = await createRatePlan(t.ownerClient, p1.id, { code: "A1" });
    const off1 = await createRatePlan(t.ownerClient, p1.id, { code: "B1", active: false });
    const on2 = await createRatePlan(t.ownerClient, p2.id, { code: "A2" });
    const off2 = await createRatePlan(t.ownerClient, p2.id, { code: "B2" });
    const withdrawn = await t.ownerClient.patch(`/rate-plans/${off2.id}`, { active: false }, representation);
    assert.equal((await expectStatus<RatePlan>("PATCH", RATE_PLAN, withdrawn, 200)).active, false);
    const theirs = await createProperty(other.ownerClient);
    await createRatePlan(other.ownerClient, theirs.id, { code: "A1" });
    const ids = async (query: string, expected: RatePlan[]) => {
      const page = await listPlans(t.ownerClient, query);
      assert.deepEqual(page.data.map((p) => p.id), inListOrder(expected), query);
      assert.equal(page.pagination.total, expected.length, query);
    };

    await ids(`?propertyId=${p1.id}`, [on1, off1]);
    await ids(`?propertyId=${p2.id}`, [on2, off2]);
    await ids(`?propertyId=${theirs.id}`, []);
    await ids(`?propertyId=${UNKNOWN_ID}`, []);
    await ids("?active=true", [on1, on2]);
    await ids("?active=false", [off1, off2]);
    await ids(`?propertyId=${p1.id}&active=false`, [off1]);
    await ids(`?propertyId=${p2.id}&active=true`, [on2]);

    const paged = await listPlans(t.ownerClient, "?active=true&limit=1&offset=1");
    assert.deepEqual(paged.data.map((p) => p.id), inListOrder([on1, on2]).slice(1));
    assert.deepEqual(paged.pagination, { limit: 1, offset: 1, total: 2, hasMore: false });
  }));

Deno.test("GET /v1/rate-plans: 400 for a bad filter, page or unknown parameter", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-list400");
    const property = await createProperty(t.ownerClient);
    await createRatePlan(t.ownerClient, property.id);
    const cases: [string, string][] = [
      ["active=yes", "active"],
      ["active=1", "active"],
      ["active=TRUE", "active"],
      ["active=", "active"],
      ["propertyId=hotel", "propertyId"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["offset=-1", "offset"],
      ["offset=x", "offset"],
      ["active=true&active=false", "active"],
      // An unknown parameter is named, like any other bad one (not "(body)": it is no body field).
      ["status=active", "status"],
      ["currency=EUR", "currency"],
    ];
    for (const [query, path] of cases) {
      const problem = await expectInvalid("GET", RATE_PLANS, await t.ownerClient.get(`/rate-plans?${query}`), path, query);
      assert.match(problem.detail, /query parameter/, query);
    }
  }));

// ---------------------------------------------------------------- GET /v1/rate-plans/{id}

Deno.test("GET /v1/rate-plans/{id}: 200 with an ETag for members; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("plan-get-a");
    const b = await tenant("plan-get-b");
    const property = await createProperty(a.ownerClient);
    const plan = await createRatePlan(a.ownerClient, property.id, { maxStay: 14, freeCancellationHours: 48 });
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");

    const read = await client(staff, a.tenantId).get(`/rate-plans/${plan.id}`);
    assert.deepEqual(await expectStatus("GET", RATE_PLAN, read, 200), plan);
    assert.match(read.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);

    const inB = client(staff, b.tenantId);
    const theirs = await expectProblem("GET", RATE_PLAN, await inB.get(`/rate-plans/${plan.id}`), 404, "not-found");
    const unknown = await expectProblem("GET", RATE_PLAN, await inB.get(`/rate-plans/${UNKNOWN_ID}`), 404, "not-found");
    assert.deepEqual(theirs, unknown, "another tenant's id reads as an unknown one");
    await expectProblem("GET", RATE_PLAN, await a.ownerClient.get(`/rate-plans/${MALFORMED_ID}`), 404, "not-found");
    await expectProblem("GET", RATE_PLAN, await a.ownerClient.get(`/rate-plans/${property.id}`), 404, "not-found");
  }));

// ---------------------------------------------------------------- PATCH /v1/rate-plans/{id}

Deno.test("PATCH /v1/rate-plans/{id}: 204 with the ETag GET then gives; 200 with the plan on return=representation", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-patch");
    const property = await createProperty(t.ownerClient);
    const plan = await createRatePlan(t.ownerClient, property.id, { freeCancellationHours: 48 });
    const path = `/rate-plans/${plan.id}`;
    const { etag: etag0 } = await readPlan(t.ownerClient, plan.id);

    const { etag: etag1 } = await expectMinimal("PATCH", RATE_PLAN, await t.ownerClient.patch(path, { nightlyPrice: 13500 }), 204);
    assert.notEqual(etag1, etag0);
    const after = await readPlan(t.ownerClient, plan.id);
    assert.deepEqual({ ...after.body, updatedAt: plan.updatedAt }, { ...plan, nightlyPrice: 13500 }, "only the price changed");
    assert.ok(after.body.updatedAt > plan.updatedAt, "updatedAt moves on");
    assert.equal(after.etag, etag1);

    const changes = {
      name: "Non-refundable saver",
      code: "NR-7",
      minStay: 2,
      maxStay: 10,
      cancellationPolicy: "non_refundable",
      freeCancellationHours: null,
      active: false,
    };
    const response = await t.ownerClient.patch(path, changes, representation);
    const updated = await expectStatus<RatePlan>("PATCH", RATE_PLAN, response, 200);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(without(updated, "updatedAt"), { ...without(after.body, "updatedAt"), ...changes });
    const final = await readPlan(t.ownerClient, plan.id);
    assert.deepEqual(final.body, updated);
    assert.equal(final.etag, response.headers.get("etag"));

    // Lifting the limit and reactivating.
    const lifted = await t.ownerClient.patch(path, { maxStay: null, active: true }, representation);
    const liftedPlan = await expectStatus<RatePlan>("PATCH", RATE_PLAN, lifted, 200);
    assert.deepEqual([liftedPlan.maxStay, liftedPlan.active, liftedPlan.minStay], [null, true, 2]);
  }));

Deno.test("PATCH /v1/rate-plans/{id}: a stale If-Match is 412 with the current ETag and changes nothing; a matching one succeeds", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-ifmatch");
    const property = await createProperty(t.ownerClient);
    const plan = await createRatePlan(t.ownerClient, property.id);
    const path = `/rate-plans/${plan.id}`;
    const { etag: etag0 } = await readPlan(t.ownerClient, plan.id);

    const { etag: etag1 } = await expectMinimal(
      "PATCH", RATE_PLAN, await t.ownerClient.patch(path, { nightlyPrice: 15000 }, { "if-match": etag0 }), 204,
    );
    const current = await readPlan(t.ownerClient, plan.id);
    assert.equal(current.body.nightlyPrice, 15000);
    assert.equal(current.etag, etag1);

    const stale = await t.ownerClient.patch(path, { nightlyPrice: 1 }, { "if-match": etag0, ...representation });
    await expectProblem("PATCH", RATE_PLAN, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    const weak = await t.ownerClient.patch(path, { nightlyPrice: 1 }, { "if-match": `W/${etag1}` });
    await expectProblem("PATCH", RATE_PLAN, weak, 412, "stale-etag");
    assert.deepEqual(await readPlan(t.ownerClient, plan.id), current, "a refused PATCH changes nothing");

    const matching = await t.ownerClient.patch(path, { nightlyPrice: 1 }, { "if-match": etag1, ...representation });
    assert.equal((await expectStatus<RatePlan>("PATCH", RATE_PLAN, matching, 200)).nightlyPrice, 1);
    assert.equal((await readPlan(t.ownerClient, plan.id)).etag, matching.headers.get("etag"));
  }));

Deno.test("PATCH /v1/rate-plans/{id}: 400 for an empty, unknown, immutable or invalid body, 422 for the stay rules; nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-patch400");
    const property = await createProperty(t.ownerClient);
    const elsewhere = await createProperty(t.ownerClient);
    const plan = await createRatePlan(t.ownerClient, property.id, { minStay: 2, maxStay: 5, freeCancellationHours: 24 });
    const path = `/rate-plans/${plan.id}`;
    const before = await readPlan(t.ownerClient, plan.id);
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ currency: "USD" }, "currency"],
      [{ propertyId: elsewhere.id }, "propertyId"],
      [{ nightlyPrice: 100, currency: "USD" }, "currency"],
      [{ discount: 5 }, "discount"],
      [{ name: "" }, "name"],
      [{ code: "nr" }, "code"],
      [{ nightlyPrice: -5 }, "nightlyPrice"],
      [{ nightlyPrice: null }, "nightlyPrice"],
      [{ minStay: 0 }, "minStay"],
      [{ minStay: null }, "minStay"],
      [{ maxStay: 400 }, "maxStay"],
      [{ cancellationPolicy: "none" }, "cancellationPolicy"],
      [{ freeCancellationHours: 9000 }, "freeCancellationHours"],
      [{ active: "false" }, "active"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", RATE_PLAN, await t.ownerClient.patch(path, body), field, JSON.stringify(body));
    }
    // The stay rules, when the body gives both sides: the document takes each field, the
    // rule between them is a 422.
    for (const [body, field] of [
      [{ minStay: 4, maxStay: 3 }, "maxStay"],
      [{ cancellationPolicy: "non_refundable", freeCancellationHours: 12 }, "freeCancellationHours"],
    ] as const) {
      await expectUnprocessable("PATCH", RATE_PLAN, await t.ownerClient.patch(path, body), field, JSON.stringify(body));
    }
    await expectProblem("PATCH", RATE_PLAN, await t.ownerClient.patch(path), 400, "validation");
    assert.deepEqual(await readPlan(t.ownerClient, plan.id), before, "nothing changed");
  }));

Deno.test("PATCH /v1/rate-plans/{id}: 422 when one side of a stay rule breaks it against the stored row; nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-patch422");
    const property = await createProperty(t.ownerClient);
    const flexible = await createRatePlan(t.ownerClient, property.id, { code: "FLEX", minStay: 3, maxStay: 5, freeCancellationHours: 48 });
    const nonRefundable = await createRatePlan(t.ownerClient, property.id, { code: "NR", cancellationPolicy: "non_refundable" });
    const cases: [RatePlan, Record<string, unknown>, RegExp][] = [
      [flexible, { maxStay: 2 }, /maxStay must be at least minStay/],
      [flexible, { minStay: 6 }, /maxStay must be at least minStay/],
      [flexible, { cancellationPolicy: "non_refundable" }, /no free cancellation hours/],
      [nonRefundable, { freeCancellationHours: 12 }, /no free cancellation hours/],
    ];
    for (const [plan, body, detail] of cases) {
      const before = await readPlan(t.ownerClient, plan.id);
      const response = await t.ownerClient.patch(`/rate-plans/${plan.id}`, body);
      const problem = await expectProblem("PATCH", RATE_PLAN, response, 422, "unprocessable");
      assert.match(problem.detail, detail, JSON.stringify(body));
      assert.deepEqual(await readPlan(t.ownerClient, plan.id), before, `${JSON.stringify(body)} changed nothing`);
    }
    // The same one-sided changes within the rules are fine.
    const within = await t.ownerClient.patch(`/rate-plans/${flexible.id}`, { maxStay: 3 }, representation);
    const narrowed = await expectStatus<RatePlan>("PATCH", RATE_PLAN, within, 200);
    assert.deepEqual([narrowed.minStay, narrowed.maxStay], [3, 3]);
    const refundable = await t.ownerClient.patch(`/rate-plans/${nonRefundable.id}`, {
      cancellationPolicy: "moderate",
      freeCancellationHours: 12,
    }, representation);
    const moderate = await expectStatus<RatePlan>("PATCH", RATE_PLAN, refundable, 200);
    assert.deepEqual([moderate.cancellationPolicy, moderate.freeCancellationHours], ["moderate", 12]);
  }));

Deno.test("PATCH /v1/rate-plans/{id}: 409 for a code the property already has; 404 for unknown, malformed and other tenants' ids", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-patch409");
    const other = await tenant("plan-patch409-other");
    const property = await createProperty(t.ownerClient);
    const second = await createProperty(t.ownerClient);
    const one = await createRatePlan(t.ownerClient, property.id, { code: "BAR" });
    const two = await createRatePlan(t.ownerClient, property.id, { code: "CORP" });
    const before = await readPlan(t.ownerClient, two.id);

    const clash = await t.ownerClient.patch(`/rate-plans/${two.id}`, { code: "BAR", nightlyPrice: 1 });
    assert.match((await expectProblem("PATCH", RATE_PLAN, clash, 409, "already-exists")).detail, /already has a rate plan with this code/);
    assert.deepEqual(await readPlan(t.ownerClient, two.id), before, "nothing changed");
    const elsewhere = await createRatePlan(t.ownerClient, second.id, { code: "CORP" });
    const recoded = await t.ownerClient.patch(`/rate-plans/${elsewhere.id}`, { code: "BAR" }, representation);
    assert.equal((await expectStatus<RatePlan>("PATCH", RATE_PLAN, recoded, 200)).code, "BAR");

    for (const id of [UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("PATCH", RATE_PLAN, await t.ownerClient.patch(`/rate-plans/${id}`, { nightlyPrice: 1 }), 404, "not-found");
      const conditional = await t.ownerClient.patch(`/rate-plans/${id}`, { nightlyPrice: 1 }, { "if-match": '"x"' });
      await expectProblem("PATCH", RATE_PLAN, conditional, 404, "not-found");
    }
    const theirs = await other.ownerClient.patch(`/rate-plans/${one.id}`, { nightlyPrice: 1 });
    await expectProblem("PATCH", RATE_PLAN, theirs, 404, "not-found");
    assert.deepEqual((await readPlan(t.ownerClient, one.id)).body, one, "another tenant changed nothing");
  }));

// ---------------------------------------------------------------- DELETE /v1/rate-plans/{id}

Deno.test("DELETE /v1/rate-plans/{id}: 204 for a plan no reservation uses, then 404; 404 for unknown, malformed and other tenants' ids", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-delete");
    const other = await tenant("plan-delete-other");
    const property = await createProperty(t.ownerClient);
    const gone = await createRatePlan(t.ownerClient, property.id);
    const kept = await createRatePlan(t.ownerClient, property.id);

    assert.equal(await expectStatus("DELETE", RATE_PLAN, await t.ownerClient.delete(`/rate-plans/${gone.id}`), 204), undefined);
    await expectProblem("GET", RATE_PLAN, await t.ownerClient.get(`/rate-plans/${gone.id}`), 404, "not-found");
    await expectProblem("DELETE", RATE_PLAN, await t.ownerClient.delete(`/rate-plans/${gone.id}`), 404, "not-found");
    await expectProblem("PATCH", RATE_PLAN, await t.ownerClient.patch(`/rate-plans/${gone.id}`, { active: false }), 404, "not-found");
    assert.deepEqual((await listPlans(t.ownerClient)).data, [kept]);
    // Its code is free again.
    assert.equal((await createRatePlan(t.ownerClient, property.id, { code: gone.code })).code, gone.code);

    await expectProblem("DELETE", RATE_PLAN, await t.ownerClient.delete(`/rate-plans/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("DELETE", RATE_PLAN, await t.ownerClient.delete(`/rate-plans/${MALFORMED_ID}`), 404, "not-found");
    await expectProblem("DELETE", RATE_PLAN, await other.ownerClient.delete(`/rate-plans/${kept.id}`), 404, "not-found");
    assert.deepEqual((await readPlan(t.ownerClient, kept.id)).body, kept, "another tenant's DELETE left it");
  }));

// The summary says "delete a rate plan that no reservation uses; otherwise deactivate
// it", and the reservations' foreign key has no ON DELETE action: the DELETE is refused
// with 409 and the plan stays exactly as it was (still active; it is not deactivated for
// you). The client withdraws it with PATCH active false, which leaves the reservation be.
Deno.test("DELETE /v1/rate-plans/{id}: 409 while a reservation uses it; the plan is unchanged and can be deactivated", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("plan-delete409");
    const property = await createProperty(t.ownerClient);
    const plan = await createRatePlan(t.ownerClient, property.id);
    const guest = await createGuest(t.ownerClient);
    const reservation = await createReservation(t.ownerClient, { propertyId: property.id, guestId: guest.id }, { ratePlanId: plan.id });
    assert.equal(reservation.ratePlanId, plan.id);
    const before = await readPlan(t.ownerClient, plan.id);

    const refused = await t.ownerClient.delete(`/rate-plans/${plan.id}`);
    const problem = await expectProblem("DELETE", RATE_PLAN, refused, 409, "still-referenced");
    assert.match(problem.detail, /refer/);
    assert.equal(problem.referencedBy, "reservations");
    assert.deepEqual(await readPlan(t.ownerClient, plan.id), before, "neither deleted nor deactivated");

    const withdrawn = await t.ownerClient.patch(`/rate-plans/${plan.id}`, { active: false }, representation);
    assert.equal((await expectStatus<RatePlan>("PATCH", RATE_PLAN, withdrawn, 200)).active, false);
    await expectProblem("DELETE", RATE_PLAN, await t.ownerClient.delete(`/rate-plans/${plan.id}`), 409, "still-referenced");
    const still = await t.ownerClient.get(`/reservations/${reservation.id}`);
    const kept = await expectStatus<Reservation>("GET", "/v1/reservations/{id}", still, 200);
    assert.deepEqual([kept.ratePlanId, kept.currency, kept.totalAmount], [plan.id, reservation.currency, reservation.totalAmount]);
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: rate plans — owner and admin create, update and delete; staff read but every write is 403 and changes nothing", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("plan-roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const property = await createProperty(t.ownerClient);

    for (const manager of [t.owner, admin]) {
      const api = client(manager, t.tenantId);
      const created = await createRatePlan(api, property.id);
      const patched = await api.patch(`/rate-plans/${created.id}`, { nightlyPrice: 9900 }, representation);
      assert.equal((await expectStatus<RatePlan>("PATCH", RATE_PLAN, patched, 200)).nightlyPrice, 9900);
      await expectMinimal("PATCH", RATE_PLAN, await api.patch(`/rate-plans/${created.id}`, { active: false }), 204);
      assert.equal(await expectStatus("DELETE", RATE_PLAN, await api.delete(`/rate-plans/${created.id}`), 204), undefined);
      await expectProblem("GET", RATE_PLAN, await api.get(`/rate-plans/${created.id}`), 404, "not-found");
    }

    const kept = await createRatePlan(t.ownerClient, property.id);
    const staffApi = client(staff, t.tenantId);
    assert.deepEqual((await listPlans(staffApi)).data, [kept]);
    const before = await readPlan(staffApi, kept.id);
    assert.deepEqual(before.body, kept);

    const create = await staffApi.post("/rate-plans", {
      propertyId: property.id, name: "Staff deal", code: "STAFF", currency: "EUR", nightlyPrice: 1,
    }, representation);
    assert.match((await expectProblem("POST", RATE_PLANS, create, 403, "forbidden")).detail, /owners and admins/);
    const patch = await staffApi.patch(`/rate-plans/${kept.id}`, { nightlyPrice: 1 }, representation);
    assert.match((await expectProblem("PATCH", RATE_PLAN, patch, 403, "forbidden")).detail, /owners and admins/);
    const conditional = await staffApi.patch(`/rate-plans/${kept.id}`, { active: false }, { "if-match": before.etag });
    await expectProblem("PATCH", RATE_PLAN, conditional, 403, "forbidden");
    const remove = await staffApi.delete(`/rate-plans/${kept.id}`);
    assert.match((await expectProblem("DELETE", RATE_PLAN, remove, 403, "forbidden")).detail, /owners and admins/);
    await expectProblem("DELETE", RATE_PLAN, await staffApi.delete(`/rate-plans/${UNKNOWN_ID}`), 403, "forbidden");

    assert.deepEqual(await readPlan(staffApi, kept.id), before, "nothing changed");
    assert.deepEqual((await listPlans(t.ownerClient)).data, [kept], "nothing was created or deleted");
  }));
