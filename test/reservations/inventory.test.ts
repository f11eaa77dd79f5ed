// Booking by room type through the gateway: a type never holds more stays on a night than
// its units in service, whoever asks and however many at once; dated blocks take a unit
// out on their nights; each refusal is its own documented problem type.
import assert from "node:assert/strict";
import { client, expectMinimal, expectProblem, expectStatus, representation, withFixture } from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createRoomType,
  createUnit,
  createUnitBlock,
  type Reservation,
  stepReservation,
} from "../support/domain.ts";

const RESERVATIONS = "/v1/reservations";
const RESERVATION = "/v1/reservations/{id}";
const UNIT_BLOCKS = "/v1/unit-blocks";
const UNIT = "/v1/units/{id}";

function statusCounts(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

Deno.test("50 concurrent bookings of the last room of a type: one is created, 49 answer 409 no-availability", () =>
  withFixture(async ({ tenant, sql }) => {
    const { ownerClient: api, tenantId } = await tenant("type-race");
    const property = await createProperty(api);
    const roomType = await createRoomType(api, property.id);
    await createUnit(api, property.id, { roomTypeId: roomType.id });
    await createUnit(api, property.id, { roomTypeId: roomType.id });
    const guest = await createGuest(api);
    const booking = (checkIn: string, checkOut: string) => ({
      propertyId: property.id, roomTypeId: roomType.id, guestId: guest.id, checkIn, checkOut, status: "confirmed",
    });
    // One of the two units is taken on the night of 2027-05-12: one room is left.
    await expectMinimal("POST", RESERVATIONS, await api.post("/reservations", booking("2027-05-11", "2027-05-13")), 201);

    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      // Every one covers the night of 2027-05-12.
      api.post("/reservations", booking(`2027-05-${String(10 + (i % 3)).padStart(2, "0")}`, `2027-05-${String(13 + (i % 2)).padStart(2, "0")}`))
    ));

    assert.deepEqual(statusCounts(responses), { 201: 1, 409: 49 });
    for (const response of responses) {
      if (response.status === 201) {
        await expectMinimal("POST", RESERVATIONS, response, 201);
        continue;
      }
      const problem = await expectProblem("POST", RESERVATIONS, response, 409, "no-availability");
      assert.equal(problem.roomTypeId, roomType.id);
      assert.ok(Array.isArray(problem.nights) && problem.nights.includes("2027-05-12"), JSON.stringify(problem));
    }
    const [night] = await sql<{ stays: number }[]>`
      select count(*)::int as stays from public.reservations
      where tenant_id = ${tenantId} and room_type_id = ${roomType.id} and status = 'confirmed' and stay @> date '2027-05-12'`;
    assert.equal(night?.stays, 2, "the night holds as many stays as the type has units");
  }));

Deno.test("a stay booked by type is assigned a unit of its type, then checked in; a unit of another type is refused", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("type-assign");
    const property = await createProperty(api);
    const double = await createRoomType(api, property.id, { code: "DBL", maxOccupancy: 3, maxChildren: 1 });
    const suite = await createRoomType(api, property.id, { code: "STE", name: "Suite", maxOccupancy: 4 });
    const room = await createUnit(api, property.id, { roomTypeId: double.id, capacity: 3 });
    const suiteUnit = await createUnit(api, property.id, { roomTypeId: suite.id, capacity: 4 });
    const guest = await createGuest(api);
    const created = await expectStatus<Reservation>("POST", RESERVATIONS, await api.post("/reservations", {
      propertyId: property.id, roomTypeId: double.id, guestId: guest.id, checkIn: "2027-06-01", checkOut: "2027-06-04",
      adults: 2, status: "confirmed",
    }, representation), 201);
    assert.equal(created.roomTypeId, double.id);
    assert.equal(created.unitId, null);

    const refused = await api.patch(`/reservations/${created.id}`, { unitId: suiteUnit.id });
    const problem = await expectProblem("PATCH", RESERVATION, refused, 422, "unprocessable");
    assert.deepEqual(problem.errors?.map((error) => error.path), ["unitId"]);

    await expectMinimal("PATCH", RESERVATION, await api.patch(`/reservations/${created.id}`, { unitId: room.id }), 204);
    const checkedIn = await stepReservation(api, created.id, "check-in");
    assert.equal(checkedIn.status, "checked_in");
    assert.equal(checkedIn.unitId, room.id);

    const crowd = await api.post("/reservations", {
      propertyId: property.id, roomTypeId: double.id, guestId: guest.id, checkIn: "2027-07-01", checkOut: "2027-07-02", adults: 1, children: 2,
    });
    const overOccupancy = await expectProblem("POST", RESERVATIONS, crowd, 422, "over-occupancy");
    assert.deepEqual([overOccupancy.maxOccupancy, overOccupancy.maxAdults, overOccupancy.maxChildren], [3, 3, 1]);
  }));

Deno.test("a block takes a unit out of order: stays on it and its type's last room are refused, a block over a stay names it", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const owned = await tenant("blocks");
    const api = owned.ownerClient;
    const staffClient = client(await memberOf(owned, "staff"), owned.tenantId);
    const property = await createProperty(api);
    const roomType = await createRoomType(api, property.id);
    const first = await createUnit(api, property.id, { roomTypeId: roomType.id });
    const second = await createUnit(api, property.id, { roomTypeId: roomType.id });
    const guest = await createGuest(api);
    const book = (fields: Record<string, unknown>) =>
      staffClient.post("/reservations", {
        propertyId: property.id, roomTypeId: roomType.id, guestId: guest.id, checkIn: "2027-08-02", checkOut: "2027-08-04", ...fields,
      }, representation);

    // Staff block a unit; the type has one room left on those nights.
    const block = await createUnitBlock(staffClient, second.id, "2027-08-01", "2027-08-05", { reason: "Burst pipe" });
    assert.equal(block.propertyId, property.id);
    await expectStatus("POST", RESERVATIONS, await book({}), 201);
    await expectProblem("POST", RESERVATIONS, await book({}), 409, "no-availability");
    const onBlocked = await expectProblem("POST", RESERVATIONS, await book({ unitId: second.id, checkIn: "2027-08-04", checkOut: "2027-08-06" }),
      409, "unit-out-of-order");
    assert.equal(onBlocked.blockId, block.id);

    // A block over a stay on the unit is refused with the stay named.
    const held = await expectStatus<Reservation>("POST", RESERVATIONS, await book({ unitId: first.id, checkIn: "2027-09-01", checkOut: "2027-09-03" }), 201);
    const occupied = await expectProblem("POST", UNIT_BLOCKS,
      await staffClient.post("/unit-blocks", { unitId: first.id, startsOn: "2027-09-02", endsOn: "2027-09-04", reason: "Paint" }), 409, "unit-occupied");
    assert.equal(occupied.reservationId, held.id);
    assert.equal(occupied.confirmationCode, held.confirmationCode);

    // Nor does the unit leave service while it holds the stay.
    const leaving = await expectProblem("PATCH", UNIT, await api.patch(`/units/${first.id}`, { status: "out_of_service" }), 409, "unit-occupied");
    assert.equal(leaving.reservationId, held.id);

    // Deleting the block puts the unit back: the refused stay now fits.
    assert.equal(await expectStatus("DELETE", "/v1/unit-blocks/{id}", await api.delete(`/unit-blocks/${block.id}`), 204), undefined);
    await expectStatus("POST", RESERVATIONS, await book({}), 201);
  }));
