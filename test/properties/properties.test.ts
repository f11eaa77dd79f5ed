// Properties end to end through the gateway: every route of src/properties/handlers.ts,
// its documented errors, tenant isolation and who may write. Every response is checked
// against the served OpenAPI document.
import assert from "node:assert/strict";
import {
  addMember,
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectPaging,
  expectProblem,
  expectStatus,
  listPage,
  MALFORMED_ID,
  readBack,
  representation,
  unique,
  UNKNOWN_ID,
  withFixture,
  expectSignedInOnly,
  type RouteCall,
} from "../support/api.ts";
import { createProperty, createUnit, type Property } from "../support/domain.ts";

const PROPERTIES = "/v1/properties";
const PROPERTY = "/v1/properties/{id}";

const listProperties = (api: Client, query = "") => listPage<Property>(api, PROPERTIES, query);

// ---------------------------------------------------------------- POST /v1/properties

Deno.test("POST /v1/properties with return=representation: 201, the property, Location and ETag", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("create");
    const input = {
      name: unique("Harbour House"),
      timezone: "Europe/Lisbon",
      currency: "EUR",
      addressLine1: "Rua do Porto 1",
      city: "Lisbon",
      postalCode: "1100-001",
      countryCode: "PT",
      email: "front@harbour.example",
      phone: "+351912345678",
      checkInTime: "14:30",
    };
    const response = await t.ownerClient.post("/properties", input, representation);
    const created = await expectStatus<Property>("POST", PROPERTIES, response, 201);
    assert.deepEqual(
      { ...created, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        ...input,
        addressLine2: null,
        region: null,
        checkInTime: "14:30:00",
        checkOutTime: "11:00:00",
        status: "active",
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    const { location, body } = await readBack(t.ownerClient, "/properties", response, PROPERTY);
    assert.equal(location, `/properties/${created.id}`);
    assert.deepEqual(body, created);
  }));

Deno.test("POST /v1/properties without Prefer: 201 with Location, ETag and the new id", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("create-min");
    const name = unique("Quiet Inn");
    const response = await t.ownerClient.post("/properties", { name, timezone: "America/New_York", currency: "USD" });
    await expectMinimal("POST", PROPERTIES, response, 201);
    const { location, body: property } = await readBack<Property>(t.ownerClient, "/properties", response, PROPERTY);
    assert.match(location, /^\/properties\/[0-9a-f-]{36}$/);
    assert.deepEqual([property.name, property.timezone, property.currency], [name, "America/New_York", "USD"]);
  }));

Deno.test("POST /v1/properties: 400 for missing, unknown or invalid fields", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("create400");
    const valid = { name: unique("Valid"), timezone: "Europe/Lisbon", currency: "EUR" };
    const cases: [unknown, string][] = [
      [{ name: valid.name, timezone: valid.timezone }, "currency"],
      [{ ...valid, currency: "eur" }, "currency"],
      [{ ...valid, name: "  " }, "name"],
      [{ ...valid, stars: 5 }, "stars"],
      [{ ...valid, status: "archived" }, "status"],
      [{ ...valid, checkInTime: "25:00" }, "checkInTime"],
      [{ ...valid, countryCode: "pt" }, "countryCode"],
      [{ ...valid, phone: "912345678" }, "phone"],
      [{ ...valid, email: "front desk" }, "email"],
      [{ ...valid, timezone: "" }, "timezone"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", PROPERTIES, await t.ownerClient.post("/properties", body), path, JSON.stringify(body));
    }
    await expectProblem("POST", PROPERTIES, await t.ownerClient.post("/properties"), 400, "validation");
    const list = await listProperties(t.ownerClient);
    assert.equal(list.pagination.total, 0);
  }));

Deno.test("POST /v1/properties: 422 for a time zone the database does not know, 400 for a currency the document does not list", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("create422");
    const base = { name: unique("Nowhere"), timezone: "Europe/Lisbon", currency: "EUR" };
    const zone = await t.ownerClient.post("/properties", { ...base, timezone: "Mars/Olympus_Mons" });
    assert.match((await expectProblem("POST", PROPERTIES, zone, 422, "unprocessable")).detail, /timezone/);
    const currency = await t.ownerClient.post("/properties", { ...base, currency: "ZZZ" });
    await expectInvalid("POST", PROPERTIES, currency, "currency");
    const list = await listProperties(t.ownerClient);
    assert.equal(list.pagination.total, 0);
  }));

Deno.test("POST /v1/properties: 409 for a name the tenant already uses; another tenant may use it", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("dup-a");
    const b = await tenant("dup-b");
    const first = await createProperty(a.ownerClient);
    const again = await a.ownerClient.post("/properties", { name: first.name, timezone: "UTC", currency: "GBP" });
    assert.match((await expectProblem("POST", PROPERTIES, again, 409, "already-exists")).detail, /name already exists/);
    const padded = await a.ownerClient.post("/properties", { name: `  ${first.name} `, timezone: "UTC", currency: "GBP" });
    await expectProblem("POST", PROPERTIES, padded, 409, "already-exists");
    assert.equal((await createProperty(b.ownerClient, { name: first.name })).name, first.name);
  }));

// ---------------------------------------------------------------- GET /v1/properties

Deno.test("GET /v1/properties: the tenant's properties by name, paged and filtered by status", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("list");
    const other = await tenant("list-other");
    const staff = await memberOf(t, "staff");
    const suffix = crypto.randomUUID().slice(0, 8);
    const c = await createProperty(t.ownerClient, { name: `C ${suffix}` });
    const a = await createProperty(t.ownerClient, { name: `A ${suffix}` });
    const b = await createProperty(t.ownerClient, { name: `B ${suffix}` });
    await createProperty(other.ownerClient, { name: `A ${suffix}` });
    await expectMinimal("PATCH", PROPERTY, await t.ownerClient.patch(`/properties/${b.id}`, { status: "archived" }), 204);

    const api = client(staff, t.tenantId);
    await expectPaging((query) => listProperties(api, query), [a.id, b.id, c.id], ["?limit=1&offset=1", "?offset=10"]);

    const active = await listProperties(api, "?status=active");
    assert.deepEqual(active.data.map((p) => p.id), [a.id, c.id]);
    assert.equal(active.pagination.total, 2);
    const archived = await listProperties(api, "?status=archived");
    assert.deepEqual(archived.data.map((p) => [p.id, p.status]), [[b.id, "archived"]]);

    // The header is a UUID in any case.
    const upper = client(staff, t.tenantId.toUpperCase());
    const same = await listProperties(upper);
    assert.equal(same.pagination.total, 3);
  }));

Deno.test("GET /v1/properties: 400 for a bad query", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("list400");
    const cases: [string, string][] = [
      ["status=deleted", "status"],
      ["limit=0", "limit"],
      ["limit=abc", "limit"],
      ["offset=-5", "offset"],
      ["sort=name", "sort"],
      ["status=active&status=archived", "status"],
    ];
    for (const [query, field] of cases) {
      await expectInvalid("GET", PROPERTIES, await t.ownerClient.get(`/properties?${query}`), field, query);
    }
  }));

// ---------------------------------------------------------------- x-tenant-id and sessions

Deno.test("tenant header: 400 when missing or malformed, 403 for a tenant the caller is not in", () =>
  withFixture(async ({ user, tenant }) => {
    const t = await tenant("header");
    const property = await createProperty(t.ownerClient);
    const noTenant = client(t.owner);
    const malformed = client(t.owner, "tenant-1");
    const stranger = client(await user("stranger"), t.tenantId);
    const elsewhere = await tenant("header-other");
    const wrongTenant = client(t.owner, elsewhere.tenantId);
    const body = { name: unique("Header"), timezone: "UTC", currency: "EUR" };
    const calls: RouteCall[] = [
      ["GET", PROPERTIES, (api) => api.get("/properties")],
      ["POST", PROPERTIES, (api) => api.post("/properties", body)],
      ["GET", PROPERTY, (api) => api.get(`/properties/${property.id}`)],
      ["PATCH", PROPERTY, (api) => api.patch(`/properties/${property.id}`, { city: "Porto" })],
      ["DELETE", PROPERTY, (api) => api.delete(`/properties/${property.id}`)],
    ];
    for (const [method, template, send] of calls) {
      const missing = await expectProblem(method, template, await send(noTenant), 400, "validation");
      assert.deepEqual(missing.errors?.map((e) => e.path), ["x-tenant-id"]);
      const bad = await expectProblem(method, template, await send(malformed), 400, "validation");
      assert.deepEqual(bad.errors?.map((e) => e.path), ["x-tenant-id"]);
      await expectProblem(method, template, await send(stranger), 403, "forbidden");
      await expectProblem(method, template, await send(wrongTenant), 403, "forbidden");
    }
    const still = await expectStatus<Property>("GET", PROPERTY, await t.ownerClient.get(`/properties/${property.id}`), 200);
    assert.deepEqual(still, property, "nothing was changed");
  }));

Deno.test("properties: 401 without a token and after the session ended, on every route", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("auth");
    const property = await createProperty(t.ownerClient);
    const body = { name: unique("Auth"), timezone: "UTC", currency: "EUR" };
    const calls: RouteCall[] = [
      ["GET", PROPERTIES, (api) => api.get("/properties")],
      ["POST", PROPERTIES, (api) => api.post("/properties", body)],
      ["GET", PROPERTY, (api) => api.get(`/properties/${property.id}`)],
      ["PATCH", PROPERTY, (api) => api.patch(`/properties/${property.id}`, { city: "Porto" })],
      ["DELETE", PROPERTY, (api) => api.delete(`/properties/${property.id}`)],
    ];
    await expectSignedInOnly(calls, t.tenantId, t.owner, t.ownerClient);
  }));

// ---------------------------------------------------------------- GET /v1/properties/{id}

Deno.test("GET /v1/properties/{id}: 200 with an ETag; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("get-a");
    const b = await tenant("get-b");
    const property = await createProperty(a.ownerClient);
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");

    const read = await client(staff, a.tenantId).get(`/properties/${property.id}`);
    assert.deepEqual(await expectStatus("GET", PROPERTY, read, 200), property);
    assert.ok(read.headers.get("etag"));

    const inB = client(staff, b.tenantId);
    await expectProblem("GET", PROPERTY, await inB.get(`/properties/${property.id}`), 404, "not-found");
    await expectProblem("GET", PROPERTY, await inB.get(`/properties/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("GET", PROPERTY, await inB.get(`/properties/${MALFORMED_ID}`), 404, "not-found");
  }));

// ---------------------------------------------------------------- PATCH /v1/properties/{id}

Deno.test("PATCH /v1/properties/{id}: 204 with an ETag, or 200 with the property; If-Match guards the write", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("patch");
    const property = await createProperty(t.ownerClient);
    const path = `/properties/${property.id}`;
    const first = await t.ownerClient.get(path);
    await expectStatus("GET", PROPERTY, first, 200);
    const etag0 = first.headers.get("etag")!;

    const { etag: etag1 } = await expectMinimal(
      "PATCH", PROPERTY, await t.ownerClient.patch(path, { city: "Porto" }, { "if-match": etag0 }), 204,
    );
    assert.notEqual(etag1, etag0);
    const second = await t.ownerClient.get(path);
    assert.equal((await expectStatus<Property>("GET", PROPERTY, second, 200)).city, "Porto");
    assert.equal(second.headers.get("etag"), etag1);

    const stale = await t.ownerClient.patch(path, { city: "Faro" }, { "if-match": etag0 });
    await expectProblem("PATCH", PROPERTY, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    const weak = await t.ownerClient.patch(path, { city: "Faro" }, { "if-match": `W/${etag0}` });
    await expectProblem("PATCH", PROPERTY, weak, 412, "stale-etag");
    // If-Match compares strongly: even the current tag, marked weak, does not match.
    const weakCurrent = await t.ownerClient.patch(path, { city: "Faro" }, { "if-match": `W/${etag1}` });
    await expectProblem("PATCH", PROPERTY, weakCurrent, 412, "stale-etag");

    const full = await t.ownerClient.patch(path, { city: null, checkOutTime: "10:30", status: "archived" }, {
      ...representation,
      "if-match": etag1,
    });
    const updated = await expectStatus<Property>("PATCH", PROPERTY, full, 200);
    assert.deepEqual([updated.city, updated.checkOutTime, updated.status], [null, "10:30:00", "archived"]);
    assert.equal(updated.currency, property.currency);
    const third = await t.ownerClient.get(path);
    assert.deepEqual(await expectStatus("GET", PROPERTY, third, 200), updated);
    assert.equal(third.headers.get("etag"), full.headers.get("etag"));

    const any = await t.ownerClient.patch(path, { status: "active" }, { "if-match": "*", ...representation });
    assert.equal((await expectStatus<Property>("PATCH", PROPERTY, any, 200)).status, "active");
  }));

Deno.test("PATCH /v1/properties/{id}: 400 for an empty, unknown or invalid body; 422 for an unknown time zone", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("patch4xx");
    const property = await createProperty(t.ownerClient);
    const path = `/properties/${property.id}`;
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ currency: "USD" }, "currency"],
      [{ status: "deleted" }, "status"],
      [{ name: "" }, "name"],
      [{ checkInTime: "3pm" }, "checkInTime"],
      [{ stars: 4 }, "stars"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", PROPERTY, await t.ownerClient.patch(path, body), field, JSON.stringify(body));
    }
    await expectInvalid("PATCH", PROPERTY, await t.ownerClient.patch(path), "(body)", "no body");
    const zone = await t.ownerClient.patch(path, { timezone: "Europe/Atlantis" });
    assert.match((await expectProblem("PATCH", PROPERTY, zone, 422, "unprocessable")).detail, /timezone/);
    const shape = await t.ownerClient.patch(path, { timezone: "not a zone" });
    await expectProblem("PATCH", PROPERTY, shape, 422, "unprocessable");
    assert.deepEqual(await expectStatus("GET", PROPERTY, await t.ownerClient.get(path), 200), property, "nothing changed");
  }));

Deno.test("PATCH /v1/properties/{id}: 409 for a name in use, 404 for unknown and malformed ids", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("patch409");
    const one = await createProperty(t.ownerClient);
    const two = await createProperty(t.ownerClient);
    const clash = await t.ownerClient.patch(`/properties/${two.id}`, { name: one.name });
    assert.match((await expectProblem("PATCH", PROPERTY, clash, 409, "already-exists")).detail, /name already exists/);
    await expectProblem("PATCH", PROPERTY, await t.ownerClient.patch(`/properties/${UNKNOWN_ID}`, { city: "x" }), 404);
    await expectProblem(
      "PATCH", PROPERTY, await t.ownerClient.patch(`/properties/${UNKNOWN_ID}`, { city: "x" }, { "if-match": '"x"' }), 404,
    );
    await expectProblem("PATCH", PROPERTY, await t.ownerClient.patch(`/properties/${MALFORMED_ID}`, { city: "x" }), 404);
  }));

// ---------------------------------------------------------------- DELETE /v1/properties/{id}

Deno.test("DELETE /v1/properties/{id}: 204, then 404; 409 while a unit refers to it; 404 for unknown and malformed ids", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("delete");
    const gone = await createProperty(t.ownerClient);
    await expectStatus("DELETE", PROPERTY, await t.ownerClient.delete(`/properties/${gone.id}`), 204);
    await expectProblem("GET", PROPERTY, await t.ownerClient.get(`/properties/${gone.id}`), 404, "not-found");
    await expectProblem("DELETE", PROPERTY, await t.ownerClient.delete(`/properties/${gone.id}`), 404, "not-found");

    const used = await createProperty(t.ownerClient);
    await createUnit(t.ownerClient, used.id);
    const refused = await t.ownerClient.delete(`/properties/${used.id}`);
    assert.match((await expectProblem("DELETE", PROPERTY, refused, 409, "still-referenced")).detail, /units refer to it\. Archive it/);
    await expectStatus("GET", PROPERTY, await t.ownerClient.get(`/properties/${used.id}`), 200);

    await expectProblem("DELETE", PROPERTY, await t.ownerClient.delete(`/properties/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("DELETE", PROPERTY, await t.ownerClient.delete(`/properties/${MALFORMED_ID}`), 404, "not-found");
  }));

Deno.test("DELETE /v1/properties/{id}: another tenant's property is a 404 and survives", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("delete-a");
    const b = await tenant("delete-b");
    const property = await createProperty(a.ownerClient);
    await expectProblem("DELETE", PROPERTY, await b.ownerClient.delete(`/properties/${property.id}`), 404, "not-found");
    await expectProblem("PATCH", PROPERTY, await b.ownerClient.patch(`/properties/${property.id}`, { city: "x" }), 404);
    assert.deepEqual(await expectStatus("GET", PROPERTY, await a.ownerClient.get(`/properties/${property.id}`), 200), property);
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: properties — owner and admin create, update and delete; staff reads but each write is 403", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");

    for (const manager of [t.owner, admin]) {
      const api = client(manager, t.tenantId);
      const created = await createProperty(api);
      await expectMinimal("PATCH", PROPERTY, await api.patch(`/properties/${created.id}`, { city: "Braga" }), 204);
      await expectStatus("DELETE", PROPERTY, await api.delete(`/properties/${created.id}`), 204);
    }

    const kept = await createProperty(t.ownerClient);
    const staffApi = client(staff, t.tenantId);
    await expectStatus("GET", PROPERTIES, await staffApi.get("/properties"), 200);
    await expectStatus("GET", PROPERTY, await staffApi.get(`/properties/${kept.id}`), 200);
    const create = await staffApi.post("/properties", { name: unique("Staff"), timezone: "UTC", currency: "EUR" });
    assert.match((await expectProblem("POST", PROPERTIES, create, 403, "forbidden")).detail, /owners and admins/);
    await expectProblem("PATCH", PROPERTY, await staffApi.patch(`/properties/${kept.id}`, { city: "x" }), 403, "forbidden");
    await expectProblem("DELETE", PROPERTY, await staffApi.delete(`/properties/${kept.id}`), 403, "forbidden");
    // Refused before any query: an unknown id is the same 403, not a 404.
    await expectProblem("DELETE", PROPERTY, await staffApi.delete(`/properties/${UNKNOWN_ID}`), 403, "forbidden");

    const list = await listProperties(staffApi);
    assert.deepEqual(list.data, [kept]);
  }));
