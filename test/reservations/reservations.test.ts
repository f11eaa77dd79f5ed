// Reservations end to end through the gateway: GET/POST /v1/reservations and
// GET/PATCH/DELETE /v1/reservations/{id} from src/reservations/handlers.ts, with the
// rules of supabase/migrations/20261122000500_reservations.sql: defaults, prices and
// currencies, no double booking, what each status still lets a PATCH change, the
// 422s of the data's rules, who may delete, and the list's order, paging and filters.
// The lifecycle actions are in lifecycle.test.ts. Every response is checked against
// the served OpenAPI document.
import assert from "node:assert/strict";
import { addMember, type Client, client, expectInvalid, expectMinimal, expectPaging, expectProblem, expectStatus, expectUnprocessable, listPage, MALFORMED_ID, type Page, readBack, representation, resolveLocation, type Schemas, UNKNOWN_ID, withFixture } from "../support/api.ts";
import {
  addDays,
  createGuest,
  createProperty,
  createRatePlan,
  createReservation,
  createStay,
  createUnit,
  readReservation as read,
  type Reservation,
  reservationIn,
  type ReservationStatus,
  routeTo,
  stepReservation as step,
} from "../support/domain.ts";

const RESERVATIONS = "/v1/reservations";
const RESERVATION = "/v1/reservations/{id}";
const TASKS = "/v1/tasks";

// The database's alphabet for confirmation codes: no 0, O, 1, I or L.
const CONFIRMATION_CODE = /^[2-9A-HJKMNP-Z]{8}$/;

const STATUSES = Object.keys(routeTo) as ReservationStatus[];

const list = (api: Client, query = "") => listPage<Reservation>(api, RESERVATIONS, query);

// A property with two units and a guest; `make` books the guest into a unit for the nights.
async function twoUnits(api: Client) {
  const property = await createProperty(api);
  const unit = await createUnit(api, property.id);
  const otherUnit = await createUnit(api, property.id);
  const guest = await createGuest(api);
  const make = (unitId: string, checkIn: string, checkOut: string) =>
    createReservation(api, { propertyId: property.id, guestId: guest.id }, { unitId, checkIn, checkOut });
  return { property, unit, otherUnit, guest, make };
}

// ---------------------------------------------------------------- POST /v1/reservations

Deno.test("POST /v1/reservations with return=representation: 201, the defaults, the rate plan's price and currency", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create");
    const api = ctx.ownerClient;
    const property = await createProperty(api, { currency: "EUR" });
    const unit = await createUnit(api, property.id);
    const ratePlan = await createRatePlan(api, property.id, { currency: "GBP", nightlyPrice: 12500 });
    const guest = await createGuest(api);
    const input = {
      propertyId: property.id,
      unitId: unit.id,
      guestId: guest.id,
      ratePlanId: ratePlan.id,
      checkIn: "2027-03-10",
      checkOut: "2027-03-14",
    };
    const response = await api.post("/reservations", input, representation);
    const created = await expectStatus<Reservation>("POST", RESERVATIONS, response, 201);
    assert.match(created.confirmationCode, CONFIRMATION_CODE);
    assert.deepEqual(created, {
      ...input,
      // Booked by unit: the unit's room type.
      roomTypeId: unit.roomTypeId,
      id: created.id,
      confirmationCode: created.confirmationCode,
      adults: 1,
      children: 0,
      status: "pending",
      totalAmount: 4 * 12500,
      priceOverridden: false,
      currency: "GBP",
      amountPaid: 0,
      balance: 4 * 12500,
      source: "direct",
      channel: null,
      externalReference: null,
      notes: null,
      cancellationReason: null,
      confirmedAt: null,
      checkedInAt: null,
      checkedOutAt: null,
      cancelledAt: null,
      noShowAt: null,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    });
    assert.equal(response.headers.get("preference-applied"), "return=representation");
    const location = resolveLocation("/reservations", response);
    assert.equal(location, `/reservations/${created.id}`);
    const again = await read(api, created.id);
    assert.deepEqual(again.body, created);
    assert.equal(again.etag, response.headers.get("etag"));

    // Each reservation gets its own code.
    const next = await createReservation(api, { propertyId: property.id, guestId: guest.id }, {
      unitId: unit.id,
      checkIn: "2027-03-14",
      checkOut: "2027-03-15",
    });
    assert.match(next.confirmationCode, CONFIRMATION_CODE);
    assert.notEqual(next.confirmationCode, created.confirmationCode);
  }));

Deno.test("POST /v1/reservations without Prefer: 201, Location, ETag and the new id; created confirmed it is stamped", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create-min");
    const api = ctx.ownerClient;
    const property = await createProperty(api, { currency: "EUR" });
    const unit = await createUnit(api, property.id, { capacity: 3 });
    const ratePlan = await createRatePlan(api, property.id, { currency: "GBP" });
    const guest = await createGuest(api);
    const input = {
      propertyId: property.id,
      unitId: unit.id,
      guestId: guest.id,
      ratePlanId: ratePlan.id,
      checkIn: "2027-09-01",
      checkOut: "2027-09-03",
      adults: 2,
      children: 1,
      totalAmount: 99900,
      currency: "GBP",
      status: "confirmed",
      source: "channel_manager",
      externalReference: "CM-12345",
      notes: "Late arrival",
    };
    const response = await api.post("/reservations", input);
    await expectMinimal("POST", RESERVATIONS, response, 201);
    const { location, body: created } = await readBack<Reservation>(api, "/reservations", response, RESERVATION);
    assert.match(location, /^\/reservations\/[0-9a-f-]{36}$/);
    const { status: _, ...given } = input;
    assert.deepEqual(created, {
      ...given,
      roomTypeId: unit.roomTypeId,
      priceOverridden: true,
      id: location.slice("/reservations/".length),
      confirmationCode: created.confirmationCode,
      status: "confirmed",
      amountPaid: 0,
      balance: 99900,
      channel: null,
      cancellationReason: null,
      confirmedAt: created.createdAt,
      checkedInAt: null,
      checkedOutAt: null,
      cancelledAt: null,
      noShowAt: null,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    });
    assert.ok(created.confirmedAt, "created confirmed, it is stamped confirmed");
  }));

Deno.test("POST /v1/reservations without a rate plan: the property's currency and a price of 0 unless given", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create-noplan");
    const api = ctx.ownerClient;
    const property = await createProperty(api, { currency: "USD" });
    const guest = await createGuest(api);
    const bare = await createReservation(api, { propertyId: property.id, guestId: guest.id });
    assert.deepEqual(
      [bare.unitId, bare.ratePlanId, bare.currency, bare.totalAmount, bare.balance, bare.status],
      [null, null, "USD", 0, 0, "pending"],
    );
    const priced = await createReservation(api, { propertyId: property.id, guestId: guest.id }, { totalAmount: 45000 });
    assert.deepEqual([priced.currency, priced.totalAmount, priced.balance], ["USD", 45000, 45000]);
  }));

Deno.test("POST /v1/reservations: 400 for missing, unknown or invalid fields, 422 for checkOut not after checkIn; nothing is created", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create400");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const guest = await createGuest(api);
    const valid = { propertyId: property.id, guestId: guest.id, checkIn: "2027-03-10", checkOut: "2027-03-13" };
    const { propertyId: _p, ...noProperty } = valid;
    const { guestId: _g, ...noGuest } = valid;
    const { checkIn: _i, ...noCheckIn } = valid;
    const cases: [unknown, string][] = [
      [noProperty, "propertyId"],
      [noGuest, "guestId"],
      [noCheckIn, "checkIn"],
      [{ ...valid, checkIn: "2027-02-30" }, "checkIn"],
      [{ ...valid, checkOut: "13/03/2027" }, "checkOut"],
      [{ ...valid, status: "checked_in" }, "status"],
      [{ ...valid, adults: 0 }, "adults"],
      [{ ...valid, adults: 51 }, "adults"],
      [{ ...valid, children: -1 }, "children"],
      [{ ...valid, totalAmount: -1 }, "totalAmount"],
      [{ ...valid, totalAmount: 10.5 }, "totalAmount"],
      [{ ...valid, currency: "eur" }, "currency"],
      [{ ...valid, source: "fax" }, "source"],
      [{ ...valid, unitId: "room-1" }, "unitId"],
      [{ ...valid, externalReference: "" }, "externalReference"],
      [{ ...valid, amountPaid: 0 }, "amountPaid"],
      [{ ...valid, confirmationCode: "ABCDEFGH" }, "confirmationCode"],
      [{ ...valid, nights: 3 }, "nights"],
    ];
    for (const [body, path] of cases) {
      await expectInvalid("POST", RESERVATIONS, await api.post("/reservations", body), path, JSON.stringify(body));
    }
    for (const checkOut of ["2027-03-10", "2027-03-09"]) {
      await expectUnprocessable("POST", RESERVATIONS, await api.post("/reservations", { ...valid, checkOut }), "checkOut", checkOut);
    }
    await expectProblem("POST", RESERVATIONS, await api.post("/reservations"), 400, "validation");
    assert.equal((await list(api)).pagination.total, 0, "nothing was created");
  }));

Deno.test("POST /v1/reservations: 422 for a unit or rate plan of another property, a party over capacity, an unknown guest", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create422");
    const other = await tenant("create422-other");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id, { capacity: 2 });
    const elsewhere = await createProperty(api);
    const elsewhereUnit = await createUnit(api, elsewhere.id);
    const elsewherePlan = await createRatePlan(api, elsewhere.id);
    const guest = await createGuest(api);
    const foreignGuest = await createGuest(other.ownerClient);
    const base = { propertyId: property.id, guestId: guest.id, checkIn: "2027-03-10", checkOut: "2027-03-13" };

    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...base, unitId: elsewhereUnit.id }, /unit .* does not belong to property/i],
      [{ ...base, ratePlanId: elsewherePlan.id }, /rate plan .* does not belong to property/i],
      [{ ...base, unitId: unit.id, adults: 3 }, /sleeps 2, not 3/],
      [{ ...base, unitId: unit.id, adults: 2, children: 1 }, /sleeps 2, not 3/],
      [{ ...base, guestId: foreignGuest.id }, /referenced record does not exist/],
      [{ ...base, guestId: UNKNOWN_ID }, /referenced record does not exist/],
    ];
    for (const [body, detail] of cases) {
      // A reference outside the property or tenant is an unknown reference; the rest break a rule of the stay.
      const kind = /belong to property|referenced record/.test(detail.source)
        ? "unknown-reference"
        : /does not sell/.test(detail.source)
        ? "rate-restricted"
        : "unprocessable";
      const problem = await expectProblem("POST", RESERVATIONS, await api.post("/reservations", body), 422, kind);
      assert.match(problem.detail, detail, JSON.stringify(body));
    }
    assert.equal((await list(api)).pagination.total, 0, "nothing was created");

    // A party of exactly the unit's capacity fits.
    const full = await createReservation(api, base, { unitId: unit.id, adults: 1, children: 1 });
    assert.equal(full.adults + full.children, unit.capacity);
  }));

Deno.test("POST /v1/reservations: 422 outside the rate plan's stay limits or on an inactive plan; the limits themselves are fine", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create-limits");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const ratePlan = await createRatePlan(api, property.id, { minStay: 2, maxStay: 4, nightlyPrice: 10000 });
    const idle = await createRatePlan(api, property.id);
    await expectMinimal("PATCH", "/v1/rate-plans/{id}", await api.patch(`/rate-plans/${idle.id}`, { active: false }), 204);
    const guest = await createGuest(api);
    const base = { propertyId: property.id, guestId: guest.id, ratePlanId: ratePlan.id, checkIn: "2027-03-10" };

    const one = await api.post("/reservations", { ...base, checkOut: "2027-03-11" });
    const short = await expectProblem("POST", RESERVATIONS, one, 422, "rate-restricted");
    assert.deepEqual([short.ratePlanId, short.restrictions], [ratePlan.id, [{ code: "min_stay", date: "2027-03-10", minStay: 2 }]]);
    const five = await api.post("/reservations", { ...base, checkOut: "2027-03-15" });
    const long = await expectProblem("POST", RESERVATIONS, five, 422, "rate-restricted");
    assert.deepEqual(long.restrictions, [{ code: "max_stay", date: "2027-03-10", maxStay: 4 }]);
    const inactive = await api.post("/reservations", { ...base, ratePlanId: idle.id, checkOut: "2027-03-12" });
    assert.match((await expectProblem("POST", RESERVATIONS, inactive, 422, "unprocessable")).detail, /not active/);
    assert.equal((await list(api)).pagination.total, 0, "nothing was created");

    const two = await createReservation(api, base, { checkOut: "2027-03-12" });
    const four = await createReservation(api, base, { checkOut: "2027-03-14" });
    assert.deepEqual([two.totalAmount, four.totalAmount], [20000, 40000]);
  }));

Deno.test("POST /v1/reservations: 422 for a property that is archived", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("create-archived");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const guest = await createGuest(api);
    await expectMinimal("PATCH", "/v1/properties/{id}", await api.patch(`/properties/${property.id}`, { status: "archived" }), 204);
    const response = await api.post("/reservations", {
      propertyId: property.id, guestId: guest.id, checkIn: "2027-03-10", checkOut: "2027-03-13",
    });
    assert.match((await expectProblem("POST", RESERVATIONS, response, 422, "unknown-reference")).detail, /not an active property/);
    assert.equal((await list(api)).pagination.total, 0);
  }));

Deno.test("POST and PATCH /v1/reservations: 422 naming the currency when it is not the rate plan's", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("currency");
    const api = ctx.ownerClient;
    const property = await createProperty(api, { currency: "EUR" });
    const euros = await createRatePlan(api, property.id, { currency: "EUR" });
    const dollars = await createRatePlan(api, property.id, { currency: "USD" });
    const guest = await createGuest(api);
    const base = { propertyId: property.id, guestId: guest.id, checkIn: "2027-03-10", checkOut: "2027-03-13" };

    const created = await api.post("/reservations", { ...base, ratePlanId: euros.id, currency: "USD" });
    const createProblem = await expectProblem("POST", RESERVATIONS, created, 422, "unprocessable");
    assert.equal((await list(api)).pagination.total, 0, "nothing was created");

    const stay = await createReservation(api, base, { ratePlanId: euros.id });
    const moved = await api.patch(`/reservations/${stay.id}`, { ratePlanId: dollars.id });
    const patchProblem = await expectProblem("PATCH", RESERVATION, moved, 422, "unprocessable");
    assert.deepEqual((await read(api, stay.id)).body, stay, "nothing changed");

    // The rule broken is the currency; the rate plan does exist in this tenant.
    assert.match(createProblem.detail, /currency/i);
    assert.match(patchProblem.detail, /currency/i);
  }));

Deno.test("POST and PATCH /v1/reservations: a stay of 365 nights is fine; 366 is a 422 naming the limit", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("long-stay");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const guest = await createGuest(api);
    const base = { propertyId: property.id, guestId: guest.id };
    const year = await createReservation(api, base, { checkIn: "2027-01-01", checkOut: "2028-01-01" });
    assert.deepEqual([year.checkIn, year.checkOut], ["2027-01-01", "2028-01-01"]);

    const tooLong = await api.post("/reservations", { ...base, checkIn: "2029-01-01", checkOut: "2030-01-02" });
    const createProblem = await expectProblem("POST", RESERVATIONS, tooLong, 422, "unprocessable");
    assert.equal((await list(api)).pagination.total, 1, "nothing more was created");
    const longer = await api.patch(`/reservations/${year.id}`, { checkOut: "2028-01-02" });
    const patchProblem = await expectProblem("PATCH", RESERVATION, longer, 422, "unprocessable");
    assert.deepEqual((await read(api, year.id)).body, year, "nothing changed");

    assert.match(createProblem.detail, /365/);
    assert.match(patchProblem.detail, /365/);
  }));

// ---------------------------------------------------------------- double booking

Deno.test("POST /v1/reservations: 409 for nights taken on the unit; back-to-back, another unit and freed nights are fine", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("overlap");
    const api = ctx.ownerClient;
    const { property, unit, otherUnit, guest, make } = await twoUnits(api);
    const on = (unitId: string, checkIn: string, checkOut: string) =>
      ({ propertyId: property.id, guestId: guest.id, unitId, checkIn, checkOut });
    const first = await make(unit.id, "2027-03-10", "2027-03-13");

    for (const [checkIn, checkOut] of [
      ["2027-03-10", "2027-03-13"], // the same nights
      ["2027-03-12", "2027-03-15"], // arrives before the other leaves
      ["2027-03-08", "2027-03-11"], // leaves after the other arrives
      ["2027-03-11", "2027-03-12"], // inside
      ["2027-03-09", "2027-03-14"], // around
    ] as const) {
      const response = await api.post("/reservations", on(unit.id, checkIn, checkOut));
      const problem = await expectProblem("POST", RESERVATIONS, response, 409, "unit-already-booked");
      assert.match(problem.detail, /already booked/, `${checkIn}..${checkOut}`);
    }
    assert.deepEqual((await list(api, `?unitId=${unit.id}`)).data.map((r) => r.id), [first.id], "nothing was created");

    // Arriving on the other's departure day, or leaving on its arrival day, is fine.
    const after = await make(unit.id, "2027-03-13", "2027-03-15");
    const before = await make(unit.id, "2027-03-07", "2027-03-10");
    const sameNightsElsewhere = await make(otherUnit.id, "2027-03-10", "2027-03-13");
    assert.deepEqual((await list(api, `?unitId=${unit.id}`)).data.map((r) => r.id), [before.id, first.id, after.id]);
    assert.equal(sameNightsElsewhere.unitId, otherUnit.id);

    // Cancelled, its nights are free again.
    await step(api, first.id, "cancel");
    const rebooked = await make(unit.id, "2027-03-10", "2027-03-13");
    assert.equal(rebooked.status, "pending");
  }));

Deno.test("PATCH /v1/reservations/{id}: 409 for moving dates or unit onto taken nights; back-to-back and free nights are fine", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("overlap-patch");
    const api = ctx.ownerClient;
    const { unit, otherUnit, make } = await twoUnits(api);
    const first = await make(unit.id, "2027-03-10", "2027-03-13");
    const second = await make(unit.id, "2027-03-13", "2027-03-16");
    const third = await make(otherUnit.id, "2027-03-10", "2027-03-13");

    const refusals: [Reservation, Record<string, unknown>][] = [
      [second, { checkIn: "2027-03-12" }],
      [first, { checkOut: "2027-03-14" }],
      [second, { checkIn: "2027-03-09", checkOut: "2027-03-11" }],
      [third, { unitId: unit.id }],
      [third, { unitId: unit.id, checkIn: "2027-03-15", checkOut: "2027-03-17" }],
    ];
    for (const [reservation, body] of refusals) {
      const response = await api.patch(`/reservations/${reservation.id}`, body);
      const problem = await expectProblem("PATCH", RESERVATION, response, 409, "unit-already-booked");
      assert.match(problem.detail, /already booked/, JSON.stringify(body));
      assert.deepEqual((await read(api, reservation.id)).body, reservation, "nothing changed");
    }

    // Moving onto free nights of the unit, back to back with both neighbours.
    const moved = await api.patch(`/reservations/${third.id}`, {
      unitId: unit.id, checkIn: "2027-03-16", checkOut: "2027-03-18",
    }, representation);
    const body = await expectStatus<Reservation>("PATCH", RESERVATION, moved, 200);
    assert.deepEqual([body.unitId, body.checkIn, body.checkOut], [unit.id, "2027-03-16", "2027-03-18"]);
    const shortened = await api.patch(`/reservations/${second.id}`, { checkOut: "2027-03-15" }, representation);
    assert.equal((await expectStatus<Reservation>("PATCH", RESERVATION, shortened, 200)).checkOut, "2027-03-15");
    // A cancelled stay's nights can be taken by moving another onto them.
    await step(api, first.id, "cancel");
    const onFreed = await api.patch(`/reservations/${body.id}`, { checkIn: "2027-03-10", checkOut: "2027-03-13" });
    await expectMinimal("PATCH", RESERVATION, onFreed, 204);
  }));

// ---------------------------------------------------------------- GET /v1/reservations/{id}

Deno.test("GET /v1/reservations/{id}: 200 with an ETag; unknown, malformed and other tenants' ids are 404", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("get-a");
    const b = await tenant("get-b");
    const { reservation } = await createStay(a.ownerClient);
    const response = await a.ownerClient.get(`/reservations/${reservation.id}`);
    assert.deepEqual(await expectStatus("GET", RESERVATION, response, 200), reservation);
    assert.match(response.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);
    for (const id of [reservation.id, UNKNOWN_ID, MALFORMED_ID]) {
      await expectProblem("GET", RESERVATION, await b.ownerClient.get(`/reservations/${id}`), 404, "not-found");
    }
  }));

// ---------------------------------------------------------------- PATCH /v1/reservations/{id}

Deno.test("PATCH /v1/reservations/{id}: partial; 204 with an ETag or 200 with the reservation; If-Match guards the write", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("patch");
    const api = ctx.ownerClient;
    const { reservation, guest } = await createStay(api);
    const path = `/reservations/${reservation.id}`;
    const etag0 = (await read(api, reservation.id)).etag!;

    const { etag: etag1 } = await expectMinimal("PATCH", RESERVATION, await api.patch(path, { notes: "Cot needed" }), 204);
    assert.notEqual(etag1, etag0);
    const after1 = await read(api, reservation.id);
    assert.equal(after1.etag, etag1);
    assert.deepEqual(after1.body, { ...reservation, notes: "Cot needed", updatedAt: after1.body.updatedAt });
    assert.notEqual(after1.body.updatedAt, reservation.updatedAt);

    const stale = await api.patch(path, { notes: "Stale" }, { "if-match": etag0 });
    await expectProblem("PATCH", RESERVATION, stale, 412, "stale-etag");
    assert.equal(stale.headers.get("etag"), etag1, "a 412 names the current ETag");
    assert.deepEqual((await read(api, reservation.id)).body, after1.body, "nothing changed");

    // Dates, party and reference in one go; a stay priced from the calendar is priced
    // again for its new nights.
    const change = { checkIn: "2027-03-11", checkOut: "2027-03-15", adults: 2, externalReference: "BK-9", notes: null };
    const full = await api.patch(path, change, { ...representation, "if-match": etag1 });
    const updated = await expectStatus<Reservation>("PATCH", RESERVATION, full, 200);
    assert.equal(full.headers.get("preference-applied"), "return=representation");
    assert.deepEqual(updated, {
      ...after1.body, ...change, totalAmount: 4 * 12000, balance: 4 * 12000, updatedAt: updated.updatedAt,
    });
    const after2 = await read(api, reservation.id);
    assert.deepEqual(after2.body, updated);
    assert.equal(after2.etag, full.headers.get("etag"));

    const other = await createGuest(api);
    const priced = await api.patch(path, { totalAmount: 50000, guestId: other.id }, { ...representation, "if-match": "*" });
    const repriced = await expectStatus<Reservation>("PATCH", RESERVATION, priced, 200);
    assert.deepEqual([repriced.totalAmount, repriced.balance, repriced.guestId, repriced.priceOverridden], [50000, 50000, other.id, true]);
    // A total given is kept when the stay moves; null hands the price back to the calendar.
    const moved = await expectStatus<Reservation>("PATCH", RESERVATION, await api.patch(path, { checkOut: "2027-03-13" }, representation), 200);
    assert.equal(moved.totalAmount, 50000);
    const back = await expectStatus<Reservation>("PATCH", RESERVATION, await api.patch(path, { totalAmount: null }, representation), 200);
    assert.deepEqual([back.totalAmount, back.priceOverridden], [2 * 12000, false]);
    assert.notEqual(repriced.guestId, guest.id);
  }));

Deno.test("PATCH /v1/reservations/{id}: 400 for an empty, unknown or invalid body, and for status; 422 for checkOut not after checkIn; nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("patch400");
    const api = ctx.ownerClient;
    const { reservation } = await createStay(api);
    const path = `/reservations/${reservation.id}`;
    const cases: [unknown, string][] = [
      [{}, "(body)"],
      [{ status: "confirmed" }, "status"],
      [{ status: "cancelled", notes: "bye" }, "status"],
      [{ bedType: "king" }, "bedType"],
      [{ propertyId: reservation.propertyId }, "propertyId"],
      [{ currency: "USD" }, "currency"],
      [{ amountPaid: 0 }, "amountPaid"],
      [{ confirmationCode: "ABCDEFGH" }, "confirmationCode"],
      [{ checkIn: "2027-3-11" }, "checkIn"],
      [{ adults: 0 }, "adults"],
      [{ guestId: null }, "guestId"],
      [{ totalAmount: -5 }, "totalAmount"],
    ];
    for (const [body, field] of cases) {
      await expectInvalid("PATCH", RESERVATION, await api.patch(path, body), field, JSON.stringify(body));
    }
    for (const checkIn of ["2027-03-13", "2027-03-14"]) {
      await expectUnprocessable("PATCH", RESERVATION, await api.patch(path, { checkIn, checkOut: "2027-03-13" }), "checkOut", checkIn);
    }
    await expectProblem("PATCH", RESERVATION, await api.patch(path), 400, "validation");
    assert.deepEqual((await read(api, reservation.id)).body, reservation, "nothing changed");
  }));

Deno.test("PATCH /v1/reservations/{id}: 422 for another property's unit or rate plan, capacity, stay limits, dates out of order", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("patch422");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id, { capacity: 2 });
    const ratePlan = await createRatePlan(api, property.id, { minStay: 2, maxStay: 5 });
    const elsewhere = await createProperty(api);
    const elsewhereUnit = await createUnit(api, elsewhere.id);
    const elsewherePlan = await createRatePlan(api, elsewhere.id);
    const guest = await createGuest(api);
    const stay = await createReservation(api, { propertyId: property.id, guestId: guest.id }, {
      unitId: unit.id, ratePlanId: ratePlan.id, checkIn: "2027-03-10", checkOut: "2027-03-13",
    });
    const path = `/reservations/${stay.id}`;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ unitId: elsewhereUnit.id }, /unit .* does not belong to property/i],
      [{ ratePlanId: elsewherePlan.id }, /rate plan .* does not belong to property/i],
      [{ adults: 3 }, /sleeps 2, not 3/],
      [{ adults: 2, children: 1 }, /sleeps 2, not 3/],
      [{ checkOut: "2027-03-11" }, /does not sell this stay: min_stay/],
      [{ checkIn: "2027-03-01" }, /does not sell this stay: max_stay/],
      [{ guestId: UNKNOWN_ID }, /referenced record does not exist/],
    ];
    for (const [body, detail] of cases) {
      // A reference outside the property or tenant is an unknown reference; the rest break a rule of the stay.
      const kind = /belong to property|referenced record/.test(detail.source)
        ? "unknown-reference"
        : /does not sell/.test(detail.source)
        ? "rate-restricted"
        : "unprocessable";
      const problem = await expectProblem("PATCH", RESERVATION, await api.patch(path, body), 422, kind);
      assert.match(problem.detail, detail, JSON.stringify(body));
      assert.deepEqual((await read(api, stay.id)).body, stay, `nothing changed after ${JSON.stringify(body)}`);
    }
    // At the limits.
    await expectMinimal("PATCH", RESERVATION, await api.patch(path, { checkOut: "2027-03-12" }), 204);
    await expectMinimal("PATCH", RESERVATION, await api.patch(path, { checkOut: "2027-03-15" }), 204);
    await expectMinimal("PATCH", RESERVATION, await api.patch(path, { adults: 2 }), 204);
  }));

Deno.test("PATCH /v1/reservations/{id}: one date alone that leaves checkOut <= checkIn is a 422 that says so", (t) =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("patch-order");
    const api = ctx.ownerClient;
    const { reservation: planned } = await createStay(api);
    const property = await createProperty(api);
    const guest = await createGuest(api);
    const unplanned = await createReservation(api, { propertyId: property.id, guestId: guest.id });
    // The stays run 2027-03-10 to 2027-03-13. The body alone cannot tell (only one date
    // in it); the database compares with the stored row.
    const bodies = [{ checkOut: "2027-03-10" }, { checkOut: "2027-03-09" }, { checkIn: "2027-03-14" }];
    for (const [label, stay] of [["with a rate plan", planned], ["without a rate plan", unplanned]] as const) {
      for (const body of bodies) {
        await t.step(`${label}: ${JSON.stringify(body)}`, async () => {
          const response = await api.patch(`/reservations/${stay.id}`, body);
          const problem = await expectProblem("PATCH", RESERVATION, response, 422, "unprocessable");
          assert.deepEqual((await read(api, stay.id)).body, stay, "nothing changed");
          assert.match(problem.detail, /check.?out/i, problem.detail);
        });
      }
    }
  }));

Deno.test("PATCH /v1/reservations/{id} by status: live stays change freely; ended ones take notes only (409 naming the status)", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("patch-status");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id);
    const roomMove = await createUnit(api, property.id);
    const ratePlan = await createRatePlan(api, property.id);
    const guest = await createGuest(api);
    const otherGuest = await createGuest(api);
    const at = { propertyId: property.id, unitId: unit.id, guestId: guest.id, ratePlanId: ratePlan.id };
    let slot = 0;
    for (const status of STATUSES) {
      const checkIn = addDays("2027-05-01", 10 * slot++);
      const stay = await reservationIn(api, at, status, checkIn);
      const path = `/reservations/${stay.id}`;

      // Notes and the external reference may always change.
      const noted = await api.patch(path, { notes: `note while ${status}`, externalReference: `X-${status}` }, representation);
      const current = await expectStatus<Reservation>("PATCH", RESERVATION, noted, 200);
      assert.deepEqual(current, {
        ...stay, notes: `note while ${status}`, externalReference: `X-${status}`, updatedAt: current.updatedAt,
      }, status);

      const stayChanges: Record<string, unknown>[] = [
        { checkOut: addDays(checkIn, 4) },
        { checkIn: addDays(checkIn, 1) },
        { unitId: roomMove.id },
        { guestId: otherGuest.id },
        { adults: 2 },
        { adults: 1, children: 1 },
        { totalAmount: 1 },
        { ratePlanId: null },
        { unitId: null },
      ];
      if (status === "checked_out" || status === "cancelled" || status === "no_show") {
        for (const body of stayChanges) {
          const response = await api.patch(path, body);
          const problem = await expectProblem("PATCH", RESERVATION, response, 409, "lifecycle-transition-refused");
          assert.match(problem.detail, new RegExp(`\\b${status}\\b`), `${status} ${JSON.stringify(body)}: ${problem.detail}`);
          assert.deepEqual((await read(api, stay.id)).body, current, `${status}: nothing changed`);
        }
        continue;
      }
      // pending, confirmed and checked_in: the stay changes, except that a guest who
      // has arrived keeps the arrival date.
      let latest: Reservation = current;
      for (const body of stayChanges) {
        if (status === "checked_in" && "checkIn" in body) {
          const problem = await expectProblem("PATCH", RESERVATION, await api.patch(path, body), 409, "lifecycle-transition-refused");
          assert.match(problem.detail, /checked_in reservation cannot move its arrival date/);
          assert.deepEqual((await read(api, stay.id)).body, latest, "nothing changed");
          continue;
        }
        if (status === "checked_in" && "unitId" in body && body.unitId === null) {
          const problem = await expectProblem("PATCH", RESERVATION, await api.patch(path, body), 422, "unprocessable");
          assert.match(problem.detail, /unit/);
          assert.deepEqual((await read(api, stay.id)).body, latest, "nothing changed");
          continue;
        }
        const response = await api.patch(path, body, representation);
        const changed = await expectStatus<Reservation>("PATCH", RESERVATION, response, 200);
        const expected = { ...latest, ...body, updatedAt: changed.updatedAt } as Reservation;
        // A total given is the writer's from then on; until then the stay is priced from its
        // plan's calendar (12,000 a night, no extra guest above the room's two).
        expected.priceOverridden = latest.priceOverridden || "totalAmount" in body;
        if (!expected.priceOverridden && expected.ratePlanId) {
          expected.totalAmount = 12000 * (Date.parse(expected.checkOut) - Date.parse(expected.checkIn)) / 86_400_000;
        }
        expected.balance = expected.totalAmount - expected.amountPaid;
        assert.deepEqual(changed, expected, `${status} ${JSON.stringify(body)}`);
        latest = changed;
      }
    }
  }));

// ---------------------------------------------------------------- DELETE /v1/reservations/{id}

Deno.test("DELETE /v1/reservations/{id}: a reservation without payments is deleted in any status, then 404", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("delete");
    const api = ctx.ownerClient;
    const at = await (async () => {
      const property = await createProperty(api);
      const unit = await createUnit(api, property.id);
      const guest = await createGuest(api);
      return { propertyId: property.id, unitId: unit.id, guestId: guest.id, ratePlanId: null };
    })();
    let slot = 0;
    for (const status of STATUSES) {
      const stay = await reservationIn(api, at, status, addDays("2027-05-01", 4 * slot++));
      await expectStatus("DELETE", RESERVATION, await api.delete(`/reservations/${stay.id}`), 204);
      await expectProblem("GET", RESERVATION, await api.get(`/reservations/${stay.id}`), 404, "not-found");
      await expectProblem("DELETE", RESERVATION, await api.delete(`/reservations/${stay.id}`), 404, "not-found");
    }
    assert.equal((await list(api)).pagination.total, 0);
    // The checked-out stay's cleaning task stays, no longer tied to the reservation.
    const tasks = await expectStatus<Page<Schemas["Task"]>>(
      "GET", TASKS, await api.get(`/tasks?unitId=${at.unitId}`), 200,
    );
    assert.deepEqual(tasks.data.map((t) => [t.type, t.reservationId]), [["cleaning", null]]);

    await expectProblem("DELETE", RESERVATION, await api.delete(`/reservations/${UNKNOWN_ID}`), 404, "not-found");
    await expectProblem("DELETE", RESERVATION, await api.delete(`/reservations/${MALFORMED_ID}`), 404, "not-found");
  }));

Deno.test("DELETE /v1/reservations/{id}: 409 once a payment is recorded, and nothing changes; cancelling is the way out", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("delete409");
    const api = ctx.ownerClient;
    const { reservation } = await createStay(api, { status: "confirmed" });
    const paid = await api.post(`/reservations/${reservation.id}/payments`, { amount: 10000, method: "cash" });
    await expectMinimal("POST", "/v1/reservations/{id}/payments", paid, 201);
    const before = await read(api, reservation.id);
    assert.deepEqual([before.body.amountPaid, before.body.balance], [10000, reservation.totalAmount - 10000]);

    const refused = await api.delete(`/reservations/${reservation.id}`);
    const problem = await expectProblem("DELETE", RESERVATION, refused, 409, "still-referenced");
    const after = await read(api, reservation.id);
    assert.deepEqual(after.body, before.body, "nothing changed");
    assert.equal(after.etag, before.etag);
    assert.equal((await step(api, reservation.id, "cancel")).status, "cancelled");
    // The advice fits a reservation: it is cancelled, not archived.
    assert.match(problem.detail, /cancel/i, problem.detail);
  }));

// ---------------------------------------------------------------- roles

Deno.test("role matrix: owner, admin and staff create, read, patch and move reservations; only owner and admin delete", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const ctx = await tenant("roles");
    const admin = await memberOf(ctx, "admin");
    const staff = await memberOf(ctx, "staff");
    const property = await createProperty(ctx.ownerClient);
    const unit = await createUnit(ctx.ownerClient, property.id);
    const guest = await createGuest(ctx.ownerClient);

    let slot = 0;
    const made: Record<string, Reservation> = {};
    for (const [role, member] of [["owner", ctx.owner], ["admin", admin], ["staff", staff]] as const) {
      const api = client(member, ctx.tenantId);
      const checkIn = addDays("2027-05-01", 4 * slot++);
      const response = await api.post("/reservations", {
        propertyId: property.id, unitId: unit.id, guestId: guest.id, checkIn, checkOut: addDays(checkIn, 2),
      });
      await expectMinimal("POST", RESERVATIONS, response, 201);
      const id = resolveLocation("/reservations", response).slice("/reservations/".length);
      await expectMinimal("PATCH", RESERVATION, await api.patch(`/reservations/${id}`, { notes: `by ${role}` }), 204);
      await expectMinimal("POST", "/v1/reservations/{id}/confirm", await api.post(`/reservations/${id}/confirm`), 204);
      made[role] = (await read(api, id)).body;
      assert.deepEqual([made[role]!.notes, made[role]!.status], [`by ${role}`, "confirmed"]);
      assert.equal((await list(api)).pagination.total, slot);
    }

    const staffApi = client(staff, ctx.tenantId);
    for (const target of Object.values(made)) {
      const refused = await staffApi.delete(`/reservations/${target.id}`);
      assert.match((await expectProblem("DELETE", RESERVATION, refused, 403, "forbidden")).detail, /owners and admins/);
    }
    // Refused before any query: an unknown id is the same 403.
    await expectProblem("DELETE", RESERVATION, await staffApi.delete(`/reservations/${UNKNOWN_ID}`), 403, "forbidden");
    assert.deepEqual((await list(staffApi)).data, [made.owner, made.admin, made.staff], "nothing changed");

    await expectStatus("DELETE", RESERVATION, await client(admin, ctx.tenantId).delete(`/reservations/${made.staff!.id}`), 204);
    await expectStatus("DELETE", RESERVATION, await ctx.ownerClient.delete(`/reservations/${made.admin!.id}`), 204);
    assert.deepEqual((await list(staffApi)).data.map((r) => r.id), [made.owner!.id]);
  }));

// ---------------------------------------------------------------- GET /v1/reservations

Deno.test("GET /v1/reservations: by arrival date then id, paged with a total, filtered by status, property, unit, guest", () =>
  withFixture(async ({ user, tenant }) => {
    const ctx = await tenant("list");
    const other = await tenant("list-other");
    const api = ctx.ownerClient;
    const p1 = await createProperty(api);
    const p2 = await createProperty(api);
    const u1 = await createUnit(api, p1.id);
    const u2 = await createUnit(api, p1.id);
    const u3 = await createUnit(api, p2.id);
    const g1 = await createGuest(api);
    const g2 = await createGuest(api);
    const make = async (propertyId: string, unitId: string | null, guestId: string, checkIn: string, checkOut: string) =>
      await createReservation(api, { propertyId, guestId }, { unitId, checkIn, checkOut });
    const a = await make(p1.id, u1.id, g1.id, "2027-05-10", "2027-05-13");
    const b = await make(p1.id, u2.id, g2.id, "2027-05-10", "2027-05-12");
    const c = await make(p1.id, u1.id, g2.id, "2027-05-13", "2027-05-15");
    const d = await make(p2.id, u3.id, g1.id, "2027-05-01", "2027-05-04");
    const e = await make(p1.id, null, g1.id, "2027-05-20", "2027-05-22");
    await step(api, b.id, "confirm");
    await step(api, c.id, "cancel");
    await step(api, d.id, "confirm");
    await step(api, d.id, "check-in");
    await createStay(other.ownerClient, { checkIn: "2027-05-10", checkOut: "2027-05-13" });

    const [first, second] = [a, b].sort((x, y) => x.id < y.id ? -1 : 1);
    const order = [d, first!, second!, c, e].map((r) => r.id);
    const ids = async (query: string) => (await list(api, query)).data.map((r) => r.id);

    const staff = await user("staff");
    await addMember(api, staff, "staff");
    const all = await expectPaging((query) => list(api, query), order, ["?limit=2&offset=1", "?offset=10", "?limit=100"]);
    assert.deepEqual(await list(client(staff, ctx.tenantId)), all, "staff read the same list");
    assert.deepEqual(all.data[0], (await read(api, d.id)).body, "items are the full representation");

    assert.deepEqual(await ids("?status=pending"), [a.id, e.id]);
    assert.deepEqual(await ids("?status=checked_in"), [d.id]);
    assert.deepEqual(await ids("?status=pending,cancelled"), [a.id, c.id, e.id]);
    assert.deepEqual(await ids("?status=confirmed,checked_in,no_show"), [d.id, b.id]);
    assert.deepEqual(await ids("?status=no_show"), []);
    assert.deepEqual(await ids(`?propertyId=${p2.id}`), [d.id]);
    assert.deepEqual(await ids(`?unitId=${u1.id}`), [a.id, c.id]);
    assert.deepEqual(await ids(`?guestId=${g2.id}`), [b.id, c.id]);
    assert.deepEqual(await ids(`?propertyId=${p1.id}&status=pending&guestId=${g1.id}`), [a.id, e.id]);
    assert.deepEqual(await ids(`?unitId=${UNKNOWN_ID}`), []);
    const filtered = await list(api, `?propertyId=${p1.id}&limit=1`);
    assert.deepEqual(filtered.pagination, { limit: 1, offset: 0, total: 4, hasMore: true });
  }));

Deno.test("GET /v1/reservations: from (a night on or after it) and to (arrives before it), at their boundaries", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("list-dates");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const guest = await createGuest(api);
    const make = (checkIn: string, checkOut: string) =>
      createReservation(api, { propertyId: property.id, guestId: guest.id }, { checkIn, checkOut });
    const early = await make("2027-05-01", "2027-05-04");
    const a = await make("2027-05-10", "2027-05-13");
    const c = await make("2027-05-13", "2027-05-15");
    const late = await make("2027-05-20", "2027-05-22");
    const ids = async (query: string) => (await list(api, query)).data.map((r) => r.id);

    // A stay's nights run from check-in up to the night before check-out.
    assert.deepEqual(await ids("?from=2027-05-12"), [a.id, c.id, late.id], "a's last night is the 12th");
    assert.deepEqual(await ids("?from=2027-05-13"), [c.id, late.id], "a leaves on the 13th: no night on it");
    assert.deepEqual(await ids("?from=2027-05-04"), [a.id, c.id, late.id], "early leaves on the 4th");
    assert.deepEqual(await ids("?from=2027-05-03"), [early.id, a.id, c.id, late.id]);
    assert.deepEqual(await ids("?to=2027-05-10"), [early.id], "a arrives on the 10th: not before it");
    assert.deepEqual(await ids("?to=2027-05-11"), [early.id, a.id]);
    assert.deepEqual(await ids("?from=2027-05-12&to=2027-05-14"), [a.id, c.id]);
    assert.deepEqual(await ids("?from=2027-05-13&to=2027-05-14"), [c.id]);
    assert.deepEqual(await ids("?from=2027-05-15&to=2027-05-20"), [], "between c and late");
    assert.deepEqual(await ids("?from=2027-06-01&to=2027-05-01"), [], "an empty range");
    // `from` at or after `to` is no range, but each condition still holds on its own: a
    // stay with a night on or after the 12th that arrived before the 11th or the 12th.
    assert.deepEqual(await ids("?from=2027-05-12&to=2027-05-12"), [a.id], "a holds the night of the 12th");
    assert.deepEqual(await ids("?from=2027-05-12&to=2027-05-11"), [a.id], "a arrived on the 10th, leaves on the 13th");
    assert.deepEqual(await ids("?from=2027-05-14&to=2027-05-11"), [], "a leaves on the 13th");
    assert.deepEqual(await ids("?from=2027-05-14&to=2027-05-14"), [c.id]);
    const paged = await list(api, "?from=2027-05-04&limit=1&offset=1");
    assert.deepEqual(paged.data.map((r) => r.id), [c.id]);
    assert.deepEqual(paged.pagination, { limit: 1, offset: 1, total: 3, hasMore: true });
  }));

// The list reads check-ins from `from` less the tenant's longest stay: a stay that arrived
// long before `from` is found as long as it has a night on or after it, whatever stays
// around it, and a stay made longer moves the bound with it.
Deno.test("GET /v1/reservations: from finds a long stay that arrived long before it, and the longest stay follows changes", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("list-long-stay");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const guest = await createGuest(api);
    const make = (checkIn: string, checkOut: string) =>
      createReservation(api, { propertyId: property.id, guestId: guest.id }, { checkIn, checkOut });
    const long = await make("2027-01-05", "2027-09-01");
    const short = await make("2027-08-30", "2027-09-02");
    const ended = await make("2027-08-01", "2027-08-31");
    const grows = await make("2027-03-01", "2027-03-03");
    const ids = async (query: string) => (await list(api, query)).data.map((r) => r.id);

    assert.deepEqual(await ids("?from=2027-08-31"), [long.id, short.id], "238 nights before `from`, and one night on it");
    assert.deepEqual(await ids("?from=2027-08-31&to=2027-09-01"), [long.id, short.id]);
    assert.deepEqual(await ids("?from=2027-09-01"), [short.id], "the long stay leaves on the 1st");
    assert.equal((await list(api, "?from=2027-08-31&limit=1")).pagination.total, 2, "the count reads the same range");
    // Longer than the longest stay so far: the bound moves back with it.
    await expectMinimal("PATCH", RESERVATION, await api.patch(`/reservations/${grows.id}`, { checkOut: "2027-12-31" }), 204);
    assert.deepEqual(await ids("?from=2027-12-30"), [grows.id], "305 nights before `from`");
    assert.deepEqual(await ids("?from=2027-08-31"), [long.id, grows.id, short.id]);
    assert.ok(!(await ids("?from=2027-08-31")).includes(ended.id));
  }));

Deno.test("GET /v1/reservations: 400 for a bad query", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("list400");
    const cases: [string, string][] = [
      // A list's error names the bad item.
      ["status=unknown", "status.0"],
      ["status=pending,unknown", "status.1"],
      ["status=", "status.0"],
      ["status=pending&status=confirmed", "status"],
      ["from=2027-13-01", "from"],
      ["to=2027-02-30", "to"],
      ["from=tomorrow", "from"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      ["propertyId=not-a-uuid", "propertyId"],
      ["unitId=1", "unitId"],
      ["guestId=x", "guestId"],
      // An unknown parameter is named by its key, not reported as a problem of the body.
      ["sort=checkIn", "sort"],
    ];
    for (const [query, field] of cases) {
      const problem = await expectInvalid("GET", RESERVATIONS, await ctx.ownerClient.get(`/reservations?${query}`), field, query);
      assert.ok(problem.errors?.every((error) => error.path !== "(body)"), `${query}: ${JSON.stringify(problem.errors)}`);
    }
  }));

Deno.test("PATCH /v1/reservations/{id}: an external reference the source already has for another stay is 409 already-exists, and nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const t = await tenant("reservation-external-reference");
    const api = t.ownerClient;
    const first = await createStay(api, { source: "channel_manager", externalReference: "CM-1" });
    const second = await createStay(api, { source: "channel_manager", externalReference: "CM-2" });
    const path = `/reservations/${second.reservation.id}`;
    const refused = await api.patch(path, { externalReference: "CM-1" }, representation);
    const problem = await expectProblem("PATCH", RESERVATION, refused, 409, "already-exists");
    assert.ok(problem.errors?.some((error) => error.path === "externalReference"), JSON.stringify(problem));
    const { body: unchanged } = await read(api, second.reservation.id);
    assert.equal(unchanged.externalReference, "CM-2");
    assert.equal(first.reservation.externalReference, "CM-1");
  }));
