// Units end to end through the gateway: every route of src/units/handlers.ts, its
// documented errors, who may write, and what a reservation or task that names a unit
// does to deleting it. Every response is checked against the served OpenAPI document.
// (The tenant header, 401 and non-member 403 on every route are tested elsewhere, once.)
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
  readOne,
  representation,
  type Schemas,
  unique,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createReservation,
  createUnit,
  type Reservation,
  type Unit,
} from "../support/domain.ts";

const UNITS = "/v1/units";
const UNIT = "/v1/units/{id}";

const listUnits = (api: Client, query = "") => listPage<Unit>(api, UNITS, query);
const readUnit = (api: Client, id: string) => readOne<Unit>(api, UNIT, { id });

// By property, then name, then id: the list's documented order.
function inListOrder(units: Unit[]): string[] {
  return [...units].sort((x, y) =>
    x.propertyId < y.propertyId ? -1 : x.propertyId > y.propertyId ? 1 : x.name < y.name ? -1 : x.name > y.name ? 1 : 0
  ).map((u) => u.id);
}

// ---------------------------------------------------------------- POST /v1/units

Deno.test("POST /v1/units with return=representation: 201, the unit, a relative Location and the ETag GET gives", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-create");
    const property = await createProperty(t.ownerClient);
    const input = { propertyId: property.id, name: unique("Sea View"), type: "suite", capacity: 4, floor: "3", status: "out_of_service" };
    const response = await t.ownerClient.post("/units", input, representation);
    const created = await expectStatus<Unit>("POST", UNITS, response, 201);
    assert.deepEqual(
      { ...created, id: undefined, createdAt: undefined, updatedAt: undefined },
      { ...input, roomTypeId: created.roomTypeId, id: undefined, createdAt: undefined, updatedAt: undefined },
    );
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    // Made without a room type, it joins the one made for its kind and capacity.
    const roomType = await readOne<Schemas["RoomType"]>(t.ownerClient, "/v1/room-types/{id}", { id: created.roomTypeId });
    assert.deepEqual([roomType.body.code, roomType.body.maxOccupancy], ["SUITE-4", 4]);
    assert.equal(created.createdAt, created.updatedAt);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    const raw = response.headers.get("location")!;
    assert.doesNotMatch(raw, /^([a-z]+:|\/)/i, `a relative Location, got ${raw}`);
    assert.match(response.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);
    const { location, body } = await readBack(t.ownerClient, "/units", response, UNIT);
    assert.equal(location, `/units/${created.id}`);
    assert.deepEqual(body, created);
  }));

Deno.test("POST /v1/units without Prefer: 201, the new id, Location and ETag; the defaults are applied", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-create-min");
    const property = await createProperty(t.ownerClient);
    const name = unique("Garden Room");
    // The name is trimmed before it is stored.
    const response = await t.ownerClient.post("/units", { propertyId: property.id, name: `  ${name} ` });
    const { location } = await expectMinimal("POST", UNITS, response, 201);
    assert.doesNotMatch(location!, /^([a-z]+:|\/)/i, `a relative Location, got ${location}`);
    const { location: path, body: unit } = await readBack<Unit>(t.ownerClient, "/units", response, UNIT);
    assert.match(path, /^\/units\/[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...unit, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        propertyId: property.id,
        roomTypeId: unit.roomTypeId,
        name,
        type: "room",
        capacity: 2,
        floor: null,
        status: "active",
        id: undefined,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(path, `/units/${unit.id}`);
  }));

Deno.test("POST /v1/units: 400 for missing, unknown or invalid fields, and nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-create400");
    const property = await createProperty(t.ownerClient);
    const valid = { propertyId: property.id, name: unique("Valid") };
    const cases: [unknown, string][] = [
      [{ name: valid.name }, "propertyId"],
      [{ propertyId: property.id }, "name"],
      [{ ...valid, propertyId: "property-1" }, "propertyId"],
      [{ ...valid, propertyId: null }, "propertyId"],
      [{ ...valid, name: "   " }, "name"],
      [{ ...valid, name: "x".repeat(101) }, "name"],
      [{ ...valid, name: 7 }, "name"],
      [{ ...valid, type: "villa" }, "type"],
      [{ ...valid, capacity: 0 }, "capacity"],
      [{ ...valid, capacity: 101 }, "capacity"],
      [{ ...valid, capacity: 2.5 }, "capacity"],
      [{ ...valid, capacity: "2" }, "capacity"],
      [{ ...valid, floor: "x".repeat(21) }, "floor"],
      [{ ...valid, status: "deleted" }, "status"],
      [{ ...valid, beds: 2 }, "beds"],
      [{ ...valid, id: UNKNOWN_ID }, "id"],
      [{ ...valid, tenantId: t.tenantId }, "tenantId"],
      [[valid], "(body)"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", UNITS, await t.ownerClient.post("/units", body), path, JSON.stringify(body));
    }
    await expectProblem("POST", UNITS, await t.ownerClient.post("/units"), 400, "validation");
    assert.equal((await listUnits(t.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/units: 422 for a property that is not in the tenant, and nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-create422");
    const other = await tenant("unit-create422-other");
    const theirs = await createProperty(other.ownerClient);
    for (const propertyId of [UNKNOWN_ID, theirs.id]) {
      const response = await t.ownerClient.post("/units", { propertyId, name: unique("Nowhere") });
      const problem = await expectProblem("POST", UNITS, response, 422, "unknown-reference");
      assert.match(problem.detail, /does not exist in this tenant/);
    }
    assert.equal((await listUnits(t.ownerClient)).pagination.total, 0);
    assert.equal((await listUnits(other.ownerClient)).pagination.total, 0);
  }));

Deno.test("POST /v1/units: 409 for a name the property already has; another property or tenant may use it", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("unit-dup-a");
    const b = await tenant("unit-dup-b");
    const property = await createProperty(a.ownerClient);
    const second = await createProperty(a.ownerClient);
    const first = await createUnit(a.ownerClient, property.id);

    const again = await a.ownerClient.post("/units", { propertyId: property.id, name: first.name, type: "suite" });
    assert.match((await expectProblem("POST", UNITS, again, 409, "already-exists")).detail, /already has a unit with this name/);
    const padded = await a.ownerClient.post("/units", { propertyId: property.id, name: ` ${first.name}  ` });
    await expectProblem("POST", UNITS, padded, 409, "already-exists");
    const list = await listUnits(a.ownerClient);
    assert.deepEqual(list.data, [first]);

    assert.equal((await createUnit(a.ownerClient, second.id, { name: first.name })).name, first.name);
    const theirs = await createProperty(b.ownerClient);
    assert.equal((await createUnit(b.ownerClient, theirs.id, { name: first.name })).name, first.name);
  }));

// JSON may carry U+0000, a Postgres text column cannot hold it: the request is malformed
// for this API and answers 400 naming the field, never a 500.
Deno.test("POST and PATCH /v1/units: 400 for a NUL character in a text field, and nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-nul");
    const property = await createProperty(t.ownerClient);
    const create = await t.ownerClient.post("/units", { propertyId: property.id, name: "Room\u0000 1" });
    await expectInvalid("POST", UNITS, create, "name");
    const unit = await createUnit(t.ownerClient, property.id);
    const before = await readUnit(t.ownerClient, unit.id);
    const patch = await t.ownerClient.patch(`/units/${unit.id}`, { floor: "1\u0000" });
    await expectInvalid("PATCH", UNIT, patch, "floor");
    assert.deepEqual(await readUnit(t.ownerClient, unit.id), before);
    assert.deepEqual((await listUnits(t.ownerClient)).data, [unit]);
  }));

// ---------------------------------------------------------------- GET /v1/units

Deno.test("GET /v1/units: ordered by property and name, paged with a total, readable by staff", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("unit-list");
    const other = await tenant("unit-list-other");
    const staff = await memberOf(t, "staff");
    const p1 = await createProperty(t.ownerClient);
    const p2 = await createProperty(t.ownerClient);
    const suffix = crypto.randomUUID().slice(0, 8);
    const units = [
      await createUnit(t.ownerClient, p1.id, { name: `C ${suffix}` }),
      await createUnit(t.ownerClient, p2.id, { name: `B ${suffix}` }),
      await createUnit(t.ownerClient, p1.id, { name: `A ${suffix}` }),
      await createUnit(t.ownerClient, p2.id, { name: `D ${suffix}` }),
      await createUnit(t.ownerClient, p1.id, { name: `B ${suffix}` }),
    ];
    const theirs = await createProperty(other.ownerClient);
    await createUnit(other.ownerClient, theirs.id, { name: `A ${suffix}` });
    const order = inListOrder(units);

    const api = client(staff, t.tenantId);
    const all = await expectPaging((query) => listUnits(api, query), order, [
      "?limit=2&offset=1",
      "?limit=2&offset=4",
      "?offset=5",
      "?limit=100",
    ]);
    // The list carries the same representation GET /units/{id} does.
    for (const listed of all.data) assert.deepEqual(listed, (await readUnit(api, listed.id)).body);
  }));

Deno.test("GET /v1/units: filters by propertyId and by status, one or a comma list", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-filter");
    const other = await tenant("unit-filter-other");
    const p1 = await createProperty(t.ownerClient);
    const p2 = await createProperty(t.ownerClient);
    const empty = await createProperty(t.ownerClient);
    const active1 = await createUnit(t.ownerClient, p1.id);
    const service1 = await createUnit(t.ownerClient, p1.id, { status: "out_of_service" });
    const archived1 = await createUnit(t.ownerClient, p1.id, { status: "archived" });
    const active2 = await createUnit(t.ownerClient, p2.id);
    const archived2 = await createUnit(t.ownerClient, p2.id, { status: "archived" });
    const theirs = await createProperty(other.ownerClient);
    await createUnit(other.ownerClient, theirs.id);
    const ids = async (query: string, expected: Unit[]) => {
      const page = await listUnits(t.ownerClient, query);
      assert.deepEqual(page.data.map((u) => u.id), inListOrder(expected), query);
      assert.equal(page.pagination.total, expected.length, query);
      return page;
    };

    await ids(`?propertyId=${p1.id}`, [active1, service1, archived1]);
    await ids(`?propertyId=${p2.id}`, [active2, archived2]);
    await ids(`?propertyId=${p1.id.toUpperCase()}`, [active1, service1, archived1]);
    await ids(`?propertyId=${empty.id}`, []);
    await ids(`?propertyId=${theirs.id}`, []);
    await ids(`?propertyId=${UNKNOWN_ID}`, []);

    await ids("?status=active", [active1, active2]);
    await ids("?status=out_of_service", [service1]);
    await ids("?status=archived", [archived1, archived2]);
    await ids("?status=active,out_of_service", [active1, service1, active2]);
    await ids("?status=archived,%20out_of_service", [service1, archived1, archived2]);
    await ids("?status=active,out_of_service,archived", [active1, service1, archived1, active2, archived2]);

    await ids(`?propertyId=${p2.id}&status=archived`, [archived2]);
    await ids(`?propertyId=${p2.id}&status=out_of_service`, []);
    // Filters and paging together: the total counts the filtered rows.
    const paged = await listUnits(t.ownerClient, "?status=active,archived&limit=1&offset=2");
    assert.deepEqual(paged.data.map((u) => u.id), inListOrder([active1, archived1, active2, archived2]).slice(2, 3));
    assert.deepEqual(paged.pagination, { limit: 1, offset: 2, total: 4, hasMore: true });
  }));

Deno.test("GET /v1/units: 400 for a bad filter, page or unknown parameter", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-list400");
    const property = await createProperty(t.ownerClient);
    await createUnit(t.ownerClient, property.id);
    const cases: [string, string][] = [
      // A list's error names the bad item.
      ["status=deleted", "status.0"],
      ["status=", "status.0"],
      ["status=active,deleted", "status.1"],
      ["status=active,", "status.1"],
      ["status=ACTIVE", "status.0"],
      ["propertyId=property-1", "propertyId"],
      ["propertyId=", "propertyId"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["limit=1.5", "limit"],
      ["offset=-1", "offset"],
      [`propertyId=${property.id}&propertyId=${property.id}`, "propertyId"],
      ["status=active&status=archived", "status"],
      // An unknown parameter is named, like any other bad one (not "(body)": it is no body field).
      ["sort=name", "sort"],
      ["type=room", "type"],
    ];
    for (const [query, field] of cases) {
      const problem = await expectInvalid("GET", UNITS, await t.ownerClient.get(`/units?${query}`), field, query);
      assert.match(problem.detail, /query parameter/, query);
    }
  }));

// ---------------------------------------------------------------- GET /v1/units/{id}

Deno.test("GET /v1/units/{id}: 200 with an ETag for members; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const a = await tenant("unit-get-a");
    const b = await tenant("unit-get-b");
    const property = await createProperty(a.ownerClient);
    const unit = await createUnit(a.ownerClient, property.id, { floor: "G" });
    const staff = await memberOf(a, "staff");
    await addMember(b.ownerClient, staff, "staff");

    const read = await client(staff, a.tenantId).get(`/units/${unit.id}`);
    assert.deepEqual(await expectStatus("GET", UNIT, read, 200), unit);
    assert.match(read.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);
    const again = await a.ownerClient.get(`/units/${unit.id.toUpperCase()}`);
    assert.deepEqual(await expectStatus("GET", UNIT, again, 200), unit);
    assert.equal(again.headers.get("etag"), read.headers.get("etag"), "the same representation has the same ETag");

    const inB = client(staff, b.tenantId);
    const notFound = await expectProblem("GET", UNIT, await inB.get(`/units/${unit.id}`), 404, "not-found");
    const unknown = await expectProblem("GET", UNIT, await inB.get(`/units/${UNKNOWN_ID}`), 404, "not-found");
    assert.deepEqual(notFound, unknown, "another tenant's id reads as an unknown one");
    await expectProblem("GET", UNIT, await a.ownerClient.get(`/units/${MALFORMED_ID}`), 404, "not-found");
    await expectProblem("GET", UNIT, await a.ownerClient.get(`/units/${property.id}`), 404, "not-found");
  }));

// ---------------------------------------------------------------- PATCH /v1/units/{id}

Deno.test("PATCH /v1/units/{id}: 204 with the ETag GET then gives; 200 with the unit on return=representation", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-patch");
    const property = await createProperty(t.ownerClient);
    const unit = await createUnit(t.ownerClient, property.id, { floor: "1" });
    const path = `/units/${unit.id}`;
    const { etag: etag0 } = await readUnit(t.ownerClient, unit.id);

    const { etag: etag1 } = await expectMinimal("PATCH", UNIT, await t.ownerClient.patch(path, { capacity: 3 }), 204);
    assert.notEqual(etag1, etag0);
    const after = await readUnit(t.ownerClient, unit.id);
    assert.deepEqual({ ...after.body, updatedAt: unit.updatedAt }, { ...unit, capacity: 3 }, "only capacity changed");
    assert.ok(after.body.updatedAt > unit.updatedAt, "updatedAt moves on");
    assert.equal(after.etag, etag1);

    const name = unique("Renamed");
    const response = await t.ownerClient.patch(path, { name: ` ${name} `, type: "apartment", floor: null, status: "out_of_service" }, representation);
    const updated = await expectStatus<Unit>("PATCH", UNIT, response, 200);
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(
      { ...updated, updatedAt: undefined },
      { ...after.body, name, type: "apartment", floor: null, status: "out_of_service", updatedAt: undefined },
    );
    const final = await readUnit(t.ownerClient, unit.id);
    assert.deepEqual(final.body, updated);
    assert.equal(final.etag, response.headers.get("etag"));

    // Archiving is a status, and an archived unit can come back.
    const archived = await t.ownerClient.patch(path, { status: "archived" }, representation);
    assert.equal((await expectStatus<Unit>("PATCH", UNIT, archived, 200)).status, "archived");
    const back = await t.ownerClient.patch(path, { status: "active" }, representation);
    assert.equal((await expectStatus<Unit>("PATCH", UNIT, back, 200)).status, "active");
  }));

Deno.test("PATCH /v1/units/{id}: a stale If-Match is 412 with the current ETag and changes nothing; a matching one succeeds", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-ifmatch");
    const property = await createProperty(t.ownerClient);
    const unit = await createUnit(t.ownerClient, property.id);
    const path = `/units/${unit.id}`;
    const { etag: etag0 } = await readUnit(t.ownerClient, unit.id);

    const first = await t.ownerClient.patch(path, { capacity: 4 }, { "if-match": etag0 });
    const { etag: etag1 } = await expectMinimal("PATCH", UNIT, first, 204);
    const current = await readUnit(t.ownerClient, unit.id);
    assert.equal(current.body.capacity, 4);

    const stale = await t.ownerClient.patch(path, { capacity: 6 }, { "if-match": etag0 });
    await expectProblem("PATCH", UNIT, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    const staleRepr = await t.ownerClient.patch(path, { capacity: 6 }, { "if-match": etag0, ...representation });
    await expectProblem("PATCH", UNIT, staleRepr, 412, "stale-etag");
    const weak = await t.ownerClient.patch(path, { capacity: 6 }, { "if-match": `W/${etag1}` });
    await expectProblem("PATCH", UNIT, weak, 412, "stale-etag");
    assert.deepEqual(await readUnit(t.ownerClient, unit.id), current, "a refused PATCH changes nothing");

    const matching = await t.ownerClient.patch(path, { capacity: 6 }, { "if-match": `"nope", ${etag1}`, ...representation });
    const updated = await expectStatus<Unit>("PATCH", UNIT, matching, 200);
    assert.equal(updated.capacity, 6);
    assert.equal((await readUnit(t.ownerClient, unit.id)).etag, matching.headers.get("etag"));
    const any = await t.ownerClient.patch(path, { floor: "2" }, { "if-match": "*" });
    await expectMinimal("PATCH", UNIT, any, 204);
  }));

Deno.test("PATCH /v1/units/{id}: 400 for an empty, unknown or invalid body, and nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-patch400");
    const property = await createProperty(t.ownerClient);
    const elsewhere = await createProperty(t.ownerClient);
    const unit = await createUnit(t.ownerClient, property.id);
    const path = `/units/${unit.id}`;
    const before = await readUnit(t.ownerClient, unit.id);
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ propertyId: elsewhere.id }, "propertyId"],
      [{ name: "Moved", propertyId: elsewhere.id }, "propertyId"],
      [{ beds: 3 }, "beds"],
      [{ id: UNKNOWN_ID }, "id"],
      [{ createdAt: "2020-01-01T00:00:00Z" }, "createdAt"],
      [{ name: "" }, "name"],
      [{ name: null }, "name"],
      [{ type: "villa" }, "type"],
      [{ capacity: 0 }, "capacity"],
      [{ capacity: null }, "capacity"],
      [{ floor: "x".repeat(21) }, "floor"],
      [{ status: "deleted" }, "status"],
      [{ status: null }, "status"],
      [null, "(body)"],
      ["capacity=3", "(body)"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", UNIT, await t.ownerClient.patch(path, body), field, JSON.stringify(body));
    }
    await expectProblem("PATCH", UNIT, await t.ownerClient.patch(path), 400, "validation");
    assert.deepEqual(await readUnit(t.ownerClient, unit.id), before, "nothing changed");
  }));

Deno.test("PATCH /v1/units/{id}: 409 for a name the property already has; 404 for unknown, malformed and other tenants' ids", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-patch409");
    const other = await tenant("unit-patch409-other");
    const property = await createProperty(t.ownerClient);
    const second = await createProperty(t.ownerClient);
    const one = await createUnit(t.ownerClient, property.id);
    const two = await createUnit(t.ownerClient, property.id);
    const before = await readUnit(t.ownerClient, two.id);

    const clash = await t.ownerClient.patch(`/units/${two.id}`, { name: one.name, capacity: 5 });
    assert.match((await expectProblem("PATCH", UNIT, clash, 409, "already-exists")).detail, /already has a unit with this name/);
    assert.deepEqual(await readUnit(t.ownerClient, two.id), before, "nothing changed");
    // The same name in another property is fine.
    const elsewhere = await createUnit(t.ownerClient, second.id);
    const renamed = await t.ownerClient.patch(`/units/${elsewhere.id}`, { name: one.name }, representation);
    assert.equal((await expectStatus<Unit>("PATCH", UNIT, renamed, 200)).name, one.name);

    for (const id of [UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("PATCH", UNIT, await t.ownerClient.patch(`/units/${id}`, { capacity: 3 }), 404, "not-found");
      const conditional = await t.ownerClient.patch(`/units/${id}`, { capacity: 3 }, { "if-match": '"x"' });
      await expectProblem("PATCH", UNIT, conditional, 404, "not-found");
    }
    const theirs = await other.ownerClient.patch(`/units/${one.id}`, { capacity: 9 });
    await expectProblem("PATCH", UNIT, theirs, 404, "not-found");
    const theirsConditional = await other.ownerClient.patch(`/units/${one.id}`, { capacity: 9 }, { "if-match": "*" });
    await expectProblem("PATCH", UNIT, theirsConditional, 404, "not-found");
    assert.deepEqual((await readUnit(t.ownerClient, one.id)).body, one, "another tenant changed nothing");
  }));

// ---------------------------------------------------------------- DELETE /v1/units/{id}

Deno.test("DELETE /v1/units/{id}: 204 for a unit nothing refers to, then 404; 404 for unknown, malformed and other tenants' ids", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-delete");
    const other = await tenant("unit-delete-other");
    const property = await createProperty(t.ownerClient);
    const gone = await createUnit(t.ownerClient, property.id);
    const kept = await createUnit(t.ownerClient, property.id);

    const response = await t.ownerClient.delete(`/units/${gone.id}`);
    assert.equal(await expectStatus("DELETE", UNIT, response, 204), undefined);
    await expectProblem("GET", UNIT, await t.ownerClient.get(`/units/${gone.id}`), 404, "not-found");
    await expectProblem("DELETE", UNIT, await t.ownerClient.delete(`/units/${gone.id}`), 404, "not-found");
    await expectProblem("PATCH", UNIT, await t.ownerClient.patch(`/units/${gone.id}`, { capacity: 3 }), 404, "not-found");
    assert.deepEqual((await listUnits(t.ownerClient)).data, [kept]);

    await expectProblem("DELETE", UNIT, await t.ownerClient.delete(`/units/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("DELETE", UNIT, await t.ownerClient.delete(`/units/${MALFORMED_ID}`), 404, "not-found");
    await expectProblem("DELETE", UNIT, await other.ownerClient.delete(`/units/${kept.id}`), 404, "not-found");
    assert.deepEqual((await readUnit(t.ownerClient, kept.id)).body, kept, "another tenant's DELETE left it");
  }));

// The summary says "delete a unit that nothing refers to yet; otherwise archive it",
// and the reservations' and tasks' foreign keys have no ON DELETE action: the DELETE
// is refused with 409 and the unit stays as it was (it is not archived for you); the
// client archives it with PATCH status archived.
Deno.test("DELETE /v1/units/{id}: 409 while a reservation or a task refers to it; the unit stays as it was and can be archived", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("unit-delete409");
    const property = await createProperty(t.ownerClient);
    const booked = await createUnit(t.ownerClient, property.id);
    const guest = await createGuest(t.ownerClient);
    const reservation = await createReservation(t.ownerClient, { propertyId: property.id, guestId: guest.id }, { unitId: booked.id });
    const bookedBefore = await readUnit(t.ownerClient, booked.id);

    const refused = await t.ownerClient.delete(`/units/${booked.id}`);
    assert.match((await expectProblem("DELETE", UNIT, refused, 409, "still-referenced")).detail, /reservations refer to it\. Archive it instead/);
    assert.deepEqual(await readUnit(t.ownerClient, booked.id), bookedBefore, "the unit is neither deleted nor archived");

    // Cancelling the reservation does not end the reference.
    const cancelled = await t.ownerClient.post(`/reservations/${reservation.id}/cancel`, { reason: "plans changed" }, representation);
    const cancelledBody = await expectStatus<Reservation>("POST", "/v1/reservations/{id}/cancel", cancelled, 200);
    assert.deepEqual([cancelledBody.status, cancelledBody.unitId], ["cancelled", booked.id]);
    await expectProblem("DELETE", UNIT, await t.ownerClient.delete(`/units/${booked.id}`), 409, "still-referenced");

    const archived = await t.ownerClient.patch(`/units/${booked.id}`, { status: "archived" }, representation);
    assert.equal((await expectStatus<Unit>("PATCH", UNIT, archived, 200)).status, "archived");
    await expectProblem("DELETE", UNIT, await t.ownerClient.delete(`/units/${booked.id}`), 409, "still-referenced");
    assert.equal((await readUnit(t.ownerClient, booked.id)).body.status, "archived");

    const tasked = await createUnit(t.ownerClient, property.id);
    const task = await t.ownerClient.post(
      "/tasks", { propertyId: property.id, unitId: tasked.id, type: "cleaning", title: "Deep clean" }, representation,
    );
    assert.equal((await expectStatus<Schemas["Task"]>("POST", "/v1/tasks", task, 201)).unitId, tasked.id);
    const taskedBefore = await readUnit(t.ownerClient, tasked.id);
    await expectProblem("DELETE", UNIT, await t.ownerClient.delete(`/units/${tasked.id}`), 409, "still-referenced");
    assert.deepEqual(await readUnit(t.ownerClient, tasked.id), taskedBefore);
  }));

// ---------------------------------------------------------------- role matrix

Deno.test("role matrix: units — owner and admin create, update and delete; staff read but every write is 403 and changes nothing", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const t = await tenant("unit-roles");
    const admin = await memberOf(t, "admin");
    const staff = await memberOf(t, "staff");
    const property = await createProperty(t.ownerClient);

    for (const manager of [t.owner, admin]) {
      const api = client(manager, t.tenantId);
      const created = await createUnit(api, property.id);
      const patched = await api.patch(`/units/${created.id}`, { capacity: 3 }, representation);
      assert.equal((await expectStatus<Unit>("PATCH", UNIT, patched, 200)).capacity, 3);
      await expectMinimal("PATCH", UNIT, await api.patch(`/units/${created.id}`, { floor: "2" }), 204);
      assert.equal(await expectStatus("DELETE", UNIT, await api.delete(`/units/${created.id}`), 204), undefined);
      await expectProblem("GET", UNIT, await api.get(`/units/${created.id}`), 404, "not-found");
    }

    const kept = await createUnit(t.ownerClient, property.id);
    const staffApi = client(staff, t.tenantId);
    assert.deepEqual((await listUnits(staffApi)).data, [kept]);
    const before = await readUnit(staffApi, kept.id);
    assert.deepEqual(before.body, kept);

    const create = await staffApi.post("/units", { propertyId: property.id, name: unique("Staff room") }, representation);
    assert.match((await expectProblem("POST", UNITS, create, 403, "forbidden")).detail, /owners and admins/);
    const patch = await staffApi.patch(`/units/${kept.id}`, { capacity: 9 }, representation);
    assert.match((await expectProblem("PATCH", UNIT, patch, 403, "forbidden")).detail, /owners and admins/);
    const conditional = await staffApi.patch(`/units/${kept.id}`, { capacity: 9 }, { "if-match": before.etag });
    await expectProblem("PATCH", UNIT, conditional, 403, "forbidden");
    const remove = await staffApi.delete(`/units/${kept.id}`);
    assert.match((await expectProblem("DELETE", UNIT, remove, 403, "forbidden")).detail, /owners and admins/);
    // Refused before any query: an unknown id is the same 403, not a 404.
    await expectProblem("DELETE", UNIT, await staffApi.delete(`/units/${UNKNOWN_ID}`), 403, "forbidden");

    assert.deepEqual(await readUnit(staffApi, kept.id), before, "nothing changed");
    assert.deepEqual((await listUnits(t.ownerClient)).data, [kept], "nothing was created or deleted");
  }));
