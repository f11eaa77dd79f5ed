// A channel manager's writes (POST /v1/external/properties/{id}/reservations, PATCH and
// cancel of /v1/external/reservations/{id}): a stay booked by room type and rate plan,
// priced by the channel or the calendar, its guest found or added; the same booking
// again books nothing; a booking that finds no room is refused and never stored.
import assert from "node:assert/strict";
import type postgres from "postgres";
import {
  expectInvalid,
  expectProblem,
  expectStatus,
  expectUnprocessable,
  resolveLocation,
  type Schemas,
  withFixture,
} from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createRatePlan,
  createReservation,
  createRoomType,
  createUnit,
  type Reservation,
} from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";
import type { Client } from "../support/api.ts";

const BOOK = "/v1/external/properties/{id}/reservations";
const CHANGE = "/v1/external/reservations/{id}";
const CANCEL = "/v1/external/reservations/{id}/cancel";
const WRITE = { scopes: ["reservations:read", "reservations:write"] };
const RETURN = { prefer: "return=representation" };

type Hotel = { propertyId: string; roomTypeId: string; ratePlanId: string; units: string[] };

// A property with a room type of `rooms` units and a plan at 120.00 a night.
async function hotel(owner: Client, rooms = 2): Promise<Hotel> {
  const property = await createProperty(owner);
  const roomType = await createRoomType(owner, property.id);
  const units: string[] = [];
  for (let i = 0; i < rooms; i++) units.push((await createUnit(owner, property.id, { roomTypeId: roomType.id })).id);
  const plan = await createRatePlan(owner, property.id);
  return { propertyId: property.id, roomTypeId: roomType.id, ratePlanId: plan.id, units };
}

function booking(at: Hotel, fields: Record<string, unknown> = {}) {
  return {
    roomTypeId: at.roomTypeId, ratePlanId: at.ratePlanId, checkIn: "2027-06-09", checkOut: "2027-06-12", adults: 2,
    channel: "Booking.com", externalReference: `BDC-${crypto.randomUUID().slice(0, 10)}`,
    guest: { firstName: "Maria", lastName: "Costa", email: `maria-${crypto.randomUUID().slice(0, 8)}@guest.example` },
    ...fields,
  };
}

async function book(key: string, at: Hotel, body: unknown, headers: Record<string, string> = RETURN) {
  return await external("POST", `/properties/${at.propertyId}/reservations`, key, { body, headers });
}

async function stays(sql: postgres.Sql, propertyId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::integer as n from public.reservations where property_id = ${propertyId}`;
  return row!.n;
}

Deno.test("a channel books by room type and rate plan: priced from the calendar or at its own price, the guest found or added", () =>
  withFixture(async ({ tenant, sql }) => {
    const a = await tenant("channels");
    const at = await hotel(a.ownerClient);
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);

    const body = booking(at, { notes: "Late arrival" });
    const response = await book(key.secret, at, body);
    const made = await expectStatus<Reservation>("POST", BOOK, response, 201);
    assert.equal(response.headers.get("idempotent-replayed"), null);
    assert.equal(resolveLocation(`/external/properties/${at.propertyId}/reservations`, response), `/external/reservations/${made.id}`);
    assert.deepEqual(
      [made.propertyId, made.roomTypeId, made.unitId, made.ratePlanId, made.status, made.source, made.channel, made.externalReference],
      [at.propertyId, at.roomTypeId, null, at.ratePlanId, "confirmed", "channel_manager", "Booking.com", body.externalReference],
    );
    assert.deepEqual([made.totalAmount, made.priceOverridden, made.currency, made.notes], [36000, false, "EUR", "Late arrival"]);
    const guest = await expectStatus<Schemas["Guest"]>("GET", "/v1/guests/{id}", await a.ownerClient.get(`/guests/${made.guestId}`), 200);
    assert.deepEqual([guest.firstName, guest.lastName, guest.email], ["Maria", "Costa", body.guest.email]);
    // The front desk reads the same stay.
    const seen = await expectStatus<Reservation>("GET", "/v1/reservations/{id}", await a.ownerClient.get(`/reservations/${made.id}`), 200);
    assert.equal(seen.channel, "Booking.com");

    // A guest the front desk knows, by email in another case: found, not added again; the
    // channel fills the phone the record lacked and changes nothing else.
    const known = await createGuest(a.ownerClient, { firstName: "Rui", lastName: "Alves", email: "rui.alves@guest.example" });
    const own = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, booking(at, {
      source: "ota", channel: "Expedia", totalAmount: 33300, checkIn: "2027-07-01", checkOut: "2027-07-04",
      guest: { firstName: "RUI", lastName: "ALVES", email: "Rui.Alves@Guest.Example", phone: "+351912345678" },
    })), 201);
    assert.deepEqual([own.guestId, own.source, own.channel, own.totalAmount, own.priceOverridden], [known.id, "ota", "Expedia", 33300, true]);
    const after = await expectStatus<Schemas["Guest"]>("GET", "/v1/guests/{id}", await a.ownerClient.get(`/guests/${known.id}`), 200);
    assert.deepEqual([after.firstName, after.lastName, after.email, after.phone], ["Rui", "Alves", "rui.alves@guest.example", "+351912345678"]);

    // Without an email, a guest is the one with that name and phone.
    const byPhone = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, booking(at, {
      checkIn: "2027-08-01", checkOut: "2027-08-02", guest: { firstName: "Rui", lastName: "Alves", phone: "+351912345678" },
    })), 201);
    assert.equal(byPhone.guestId, known.id);

    // The body's rules are the session API's.
    await expectInvalid("POST", BOOK, await book(key.secret, at, { ...booking(at), channel: undefined }), "channel");
    await expectInvalid("POST", BOOK, await book(key.secret, at, { ...booking(at), guest: { firstName: "No" } }), "guest.lastName");
    await expectInvalid("POST", BOOK, await book(key.secret, at, { ...booking(at), unitId: at.units[0] }), "unitId");
    await expectUnprocessable("POST", BOOK, await book(key.secret, at, booking(at, { checkOut: "2027-06-09" })), "checkOut");
    await expectProblem("POST", BOOK, await book(key.secret, at, booking(at, { currency: "USD" })), 422);
    const elsewhere = await hotel(a.ownerClient);
    await expectProblem("POST", BOOK, await book(key.secret, at, booking(at, { roomTypeId: elsewhere.roomTypeId })), 422, "unknown-reference");
    await expectProblem("POST", BOOK, await book(key.secret, at, booking(at, { adults: 3 })), 422, "over-occupancy");
    assert.equal(await stays(sql, at.propertyId), 3, "only the three bookings were stored");
  }));

Deno.test("the same booking again answers as the first and books nothing; the same reference with other values is a 409", () =>
  withFixture(async ({ tenant, sql }) => {
    const a = await tenant("channels");
    const at = await hotel(a.ownerClient);
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);
    const body = booking(at);
    const first = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, body), 201);

    const again = await book(key.secret, at, body);
    const replayed = await expectStatus<Reservation>("POST", BOOK, again, 201);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(replayed, first);
    // The default answer is the id, as any creation's.
    const plain = await book(key.secret, at, body, {});
    assert.deepEqual(await expectStatus("POST", BOOK, plain, 201), { id: first.id });
    assert.equal(await stays(sql, at.propertyId), 1);

    const moved = await expectProblem("POST", BOOK, await book(key.secret, at, { ...body, checkOut: "2027-06-13" }), 409,
      "external-reference-reused");
    assert.match(moved.detail, /checkOut/);
    assert.match(moved.detail, new RegExp(first.id));
    // Another channel numbers its own bookings.
    const other = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, { ...body, channel: "Expedia" }), 201);
    assert.notEqual(other.id, first.id);

    // Idempotency-Key: the same request again is the first answer; another body under it a 422.
    const keyed = booking(at, { checkIn: "2027-09-01", checkOut: "2027-09-02" });
    const headers = { ...RETURN, "idempotency-key": crypto.randomUUID() };
    const once = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, keyed, headers), 201);
    const twice = await book(key.secret, at, keyed, headers);
    assert.deepEqual(await expectStatus<Reservation>("POST", BOOK, twice, 201), once);
    assert.equal(twice.headers.get("idempotent-replayed"), "true");
    await expectProblem("POST", BOOK, await book(key.secret, at, { ...keyed, adults: 1 }, headers), 422, "idempotency-key-reused");
    assert.equal(await stays(sql, at.propertyId), 3);
  }));

Deno.test("a booking that finds no room of its type is a 409 no-availability and is not stored", () =>
  withFixture(async ({ tenant, sql }) => {
    const a = await tenant("channels");
    const at = await hotel(a.ownerClient, 1);
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);
    await expectStatus("POST", BOOK, await book(key.secret, at, booking(at)), 201);
    const refused = await expectProblem("POST", BOOK, await book(key.secret, at, booking(at, { checkIn: "2027-06-11", checkOut: "2027-06-14" })),
      409, "no-availability");
    assert.equal((refused as { roomTypeId?: string }).roomTypeId, at.roomTypeId);
    assert.equal(await stays(sql, at.propertyId), 1);
    // The night after is free.
    await expectStatus("POST", BOOK, await book(key.secret, at, booking(at, { checkIn: "2027-06-12", checkOut: "2027-06-14" })), 201);
  }));

Deno.test("20 identical bookings of the last room at once store one; two different bookings of it store one and refuse the other", () =>
  withFixture(async ({ tenant, sql }) => {
    const a = await tenant("channels");
    const at = await hotel(a.ownerClient, 1);
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);

    const body = booking(at);
    const answers = await Promise.all(Array.from({ length: 20 }, () => book(key.secret, at, body)));
    const made = await Promise.all(answers.map((answer) => expectStatus<Reservation>("POST", BOOK, answer, 201)));
    assert.equal(new Set(made.map((row) => row.id)).size, 1, "every retry names the one reservation");
    assert.equal(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null).length, 1, "one booked, 19 replayed");
    assert.equal(await stays(sql, at.propertyId), 1);

    const later = { checkIn: "2027-10-01", checkOut: "2027-10-03" };
    const [one, two] = await Promise.all([book(key.secret, at, booking(at, later)), book(key.secret, at, booking(at, later))]);
    assert.deepEqual([one.status, two.status].sort(), [201, 409]);
    const refused = one.status === 409 ? one : two;
    await expectProblem("POST", BOOK, refused, 409, "no-availability");
    assert.equal(await stays(sql, at.propertyId), 2);
  }));

Deno.test("a channel changes its stay's dates, room type, party, guest and price; the front desk's own stays are not its to change", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("channels");
    const at = await hotel(a.ownerClient);
    const suites = await createRoomType(a.ownerClient, at.propertyId, { maxOccupancy: 4, standardOccupancy: 2 });
    await createUnit(a.ownerClient, at.propertyId, { roomTypeId: suites.id, capacity: 4 });
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);
    const made = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, booking(at)), 201);
    const change = (body: unknown, headers: Record<string, string> = RETURN) =>
      external("PATCH", `/reservations/${made.id}`, key.secret, { body, headers });

    // One more night: priced again from the calendar.
    const longer = await expectStatus<Reservation>("PATCH", CHANGE, await change({ checkOut: "2027-06-13" }), 200);
    assert.deepEqual([longer.checkOut, longer.totalAmount, longer.priceOverridden], ["2027-06-13", 48000, false]);
    // Another type, four guests, the channel's price.
    const bigger = await expectStatus<Reservation>("PATCH", CHANGE,
      await change({ roomTypeId: suites.id, adults: 2, children: 2, totalAmount: 50000 }), 200);
    assert.deepEqual([bigger.roomTypeId, bigger.children, bigger.totalAmount, bigger.priceOverridden], [suites.id, 2, 50000, true]);
    // The channel's price stays through a change of dates, until it hands it back.
    assert.equal((await expectStatus<Reservation>("PATCH", CHANGE, await change({ checkIn: "2027-06-10" }), 200)).totalAmount, 50000);
    const calendar = await expectStatus<Reservation>("PATCH", CHANGE, await change({ totalAmount: null }), 200);
    assert.deepEqual([calendar.totalAmount, calendar.priceOverridden], [36000, false]);
    // The guest: found or added as on booking.
    const renamed = await expectStatus<Reservation>("PATCH", CHANGE,
      await change({ guest: { firstName: "Joana", lastName: "Costa", email: "joana.costa@guest.example" } }), 200);
    assert.notEqual(renamed.guestId, made.guestId);
    assert.equal((await change({ notes: "Crib" }, {})).status, 204);

    // Refusals say what the session API says.
    await expectProblem("PATCH", CHANGE, await change({ adults: 5 }), 422, "over-occupancy");
    await expectInvalid("PATCH", CHANGE, await change({}), "(body)");
    await expectInvalid("PATCH", CHANGE, await change({ status: "checked_in" }), "status");

    // The front desk's own booking: seen, but not the channel's to change or cancel.
    const desk = await createReservation(a.ownerClient, { propertyId: at.propertyId, guestId: (await createGuest(a.ownerClient)).id }, {
      roomTypeId: at.roomTypeId, ratePlanId: at.ratePlanId, checkIn: "2027-11-01", checkOut: "2027-11-03",
    });
    await expectProblem("PATCH", CHANGE, await external("PATCH", `/reservations/${desk.id}`, key.secret, { body: { notes: "x" } }),
      403, "not-a-channel-booking");
    await expectProblem("POST", CANCEL, await external("POST", `/reservations/${desk.id}/cancel`, key.secret, { body: {} }),
      403, "not-a-channel-booking");
    const untouched = await expectStatus<Reservation>("GET", "/v1/reservations/{id}", await a.ownerClient.get(`/reservations/${desk.id}`), 200);
    assert.deepEqual([untouched.notes, untouched.status], [desk.notes, desk.status]);
  }));

Deno.test("a channel cancels its stay, and cancelling again answers alike; the nights are free again", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("channels");
    const at = await hotel(a.ownerClient, 1);
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);
    const made = await expectStatus<Reservation>("POST", BOOK, await book(key.secret, at, booking(at)), 201);
    const cancel = () => external("POST", `/reservations/${made.id}/cancel`, key.secret, { body: { reason: "Guest cancelled on the OTA" }, headers: RETURN });
    const cancelled = await expectStatus<Reservation>("POST", CANCEL, await cancel(), 200);
    assert.deepEqual([cancelled.status, cancelled.cancellationReason], ["cancelled", "Guest cancelled on the OTA"]);
    assert.deepEqual(await expectStatus<Reservation>("POST", CANCEL, await cancel(), 200), cancelled);
    // A cancelled stay's dates no longer move.
    await expectProblem("PATCH", CHANGE, await external("PATCH", `/reservations/${made.id}`, key.secret, { body: { checkOut: "2027-06-14" } }),
      409, "lifecycle-transition-refused");
    // Its room sells again.
    await expectStatus("POST", BOOK, await book(key.secret, at, booking(at)), 201);
  }));

Deno.test("a key writes only on its properties, and only with reservations:write", () =>
  withFixture(async ({ tenant, sql }) => {
    const a = await tenant("channels");
    const b = await tenant("other");
    const at = await hotel(a.ownerClient);
    const sibling = await hotel(a.ownerClient);
    const theirs = await hotel(b.ownerClient);
    const key = await issueApiKey(a.ownerClient, at.propertyId, WRITE);
    const reader = await issueApiKey(a.ownerClient, at.propertyId);

    const denied = await expectProblem("POST", BOOK, await book(reader.secret, at, booking(at)), 403, "insufficient-scope");
    assert.equal((denied as { requiredScope?: string }).requiredScope, "reservations:write");
    for (const other of [sibling, theirs]) {
      await expectProblem("POST", BOOK, await book(key.secret, other, booking(other)), 404, "not-found");
      assert.equal(await stays(sql, other.propertyId), 0);
    }
    const siblingKey = await issueApiKey(a.ownerClient, sibling.propertyId, WRITE);
    const made = await expectStatus<Reservation>("POST", BOOK, await book(siblingKey.secret, sibling, booking(sibling)), 201);
    await expectProblem("PATCH", CHANGE, await external("PATCH", `/reservations/${made.id}`, key.secret, { body: { notes: "x" } }), 404, "not-found");
    await expectProblem("POST", CANCEL, await external("POST", `/reservations/${made.id}/cancel`, key.secret, { body: {} }), 404, "not-found");
    await expectProblem("PATCH", CHANGE, await external("PATCH", `/reservations/${made.id}`, reader.secret, { body: { notes: "x" } }),
      403, "insufficient-scope");
    const [row] = await sql<{ status: string; notes: string | null }[]>`select status, notes from public.reservations where id = ${made.id}`;
    assert.deepEqual({ ...row }, { status: "confirmed", notes: null });
  }));
