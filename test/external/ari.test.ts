// What a channel mirrors (GET /v1/external/properties/{id}/ari): per room type the rooms
// left each night, per rate plan its prices and restrictions, as runs of days.
import assert from "node:assert/strict";
import { expectInvalid, expectProblem, expectStatus, expectUnprocessable, type Schemas, withFixture } from "../support/api.ts";
import {
  addDays,
  createGuest,
  createProperty,
  createRatePlan,
  createReservation,
  createRoomType,
  createUnit,
  createUnitBlock,
} from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";

const ARI = "/v1/external/properties/{id}/ari";
type Ari = Schemas["ChannelAri"];

Deno.test("ARI: each room type's rooms left per night and each plan's calendar, as runs of days that carry the same values", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("channels");
    const owner = a.ownerClient;
    const property = await createProperty(owner);
    const double = await createRoomType(owner, property.id, { code: "DBL", name: "Double" });
    const single = await createRoomType(owner, property.id, { code: "SGL", name: "Single", standardOccupancy: 1, maxOccupancy: 1 });
    const doubles = [await createUnit(owner, property.id, { roomTypeId: double.id }), await createUnit(owner, property.id, { roomTypeId: double.id })];
    const singleRoom = await createUnit(owner, property.id, { roomTypeId: single.id, capacity: 1 });
    const plan = await createRatePlan(owner, property.id, { code: "BAR" });
    const doublesOnly = await createRatePlan(owner, property.id, { code: "NRF", roomTypeId: double.id, nightlyPrice: 10000 });
    // Fridays and Saturdays of June 2027 at 180.00, Thursday 10 June closed to arrival.
    assert.equal((await owner.patch("/rate-calendar", {
      changes: [
        { ratePlanId: plan.id, from: "2027-06-01", to: "2027-06-30", weekdays: ["fri", "sat"], price: 18000 },
        { ratePlanId: plan.id, from: "2027-06-10", to: "2027-06-10", closedToArrival: true },
      ],
    })).status, 200);
    const guest = await createGuest(owner);
    await createReservation(owner, { propertyId: property.id, guestId: guest.id }, {
      roomTypeId: double.id, ratePlanId: doublesOnly.id, checkIn: "2027-06-10", checkOut: "2027-06-12", status: "confirmed",
    });
    await createUnitBlock(owner, singleRoom.id, "2027-06-11", "2027-06-13");
    const key = await issueApiKey(owner, property.id, { scopes: ["ari:read"] });

    const read = async (from: string, to: string) =>
      await expectStatus<Ari>("GET", ARI, await external("GET", `/properties/${property.id}/ari?from=${from}&to=${to}`, key.secret), 200);
    const ari = await read("2027-06-08", "2027-06-14");
    assert.deepEqual([ari.propertyId, ari.from, ari.to], [property.id, "2027-06-08", "2027-06-14"]);
    assert.deepEqual(ari.roomTypes.map((type) => [type.code, type.units, type.availability]), [
      ["DBL", 2, [
        { from: "2027-06-08", to: "2027-06-09", available: 2 },
        { from: "2027-06-10", to: "2027-06-11", available: 1 },
        { from: "2027-06-12", to: "2027-06-14", available: 2 },
      ]],
      ["SGL", 1, [
        { from: "2027-06-08", to: "2027-06-10", available: 1 },
        { from: "2027-06-11", to: "2027-06-12", available: 0 },
        { from: "2027-06-13", to: "2027-06-14", available: 1 },
      ]],
    ]);
    const [bar, nrf] = ari.ratePlans;
    assert.deepEqual([bar!.code, bar!.roomTypeId, bar!.currency, nrf!.code, nrf!.roomTypeId], ["BAR", null, "EUR", "NRF", double.id]);
    assert.deepEqual(bar!.days.map((run) => [run.from, run.to, run.price, run.closedToArrival]), [
      ["2027-06-08", "2027-06-09", 12000, false],
      ["2027-06-10", "2027-06-10", 12000, true],
      ["2027-06-11", "2027-06-12", 18000, false],
      ["2027-06-13", "2027-06-14", 12000, false],
    ]);
    assert.deepEqual(nrf!.days, [{
      from: "2027-06-08", to: "2027-06-14", price: 10000, extraAdultPrice: 0, extraChildPrice: 0, minStay: 1, maxStay: null,
      closedToArrival: false, closedToDeparture: false, closed: false,
    }]);

    // Each night's rooms left are what availability says of a one-night stay.
    for (let night = "2027-06-08"; night <= "2027-06-14"; night = addDays(night, 1)) {
      const one = await expectStatus<Schemas["Availability"]>("GET", "/v1/availability",
        await owner.get(`/availability?propertyId=${property.id}&arrival=${night}&departure=${addDays(night, 1)}&adults=1`), 200);
      for (const type of ari.roomTypes) {
        const run = type.availability.find((r) => r.from <= night && night <= r.to)!;
        assert.equal(run.available, one.roomTypes.find((t) => t.roomTypeId === type.roomTypeId)!.available, `${type.code} on ${night}`);
      }
    }

    // A year of days, one price: one run. A unit out of service leaves its type's count.
    const year = await read("2028-01-01", "2028-12-31");
    assert.deepEqual(year.roomTypes[0]!.availability, [{ from: "2028-01-01", to: "2028-12-31", available: 2 }]);
    assert.equal(year.ratePlans[1]!.days.length, 1);
    assert.equal((await owner.patch(`/units/${doubles[0]!.id}`, { status: "out_of_service" })).status, 204);
    const fewer = await read("2028-01-01", "2028-01-02");
    assert.deepEqual([fewer.roomTypes[0]!.units, fewer.roomTypes[0]!.availability[0]!.available], [1, 1]);

    for (const [query, field] of [["from=2027-06-08", "to"], ["from=June&to=2027-06-09", "from"], ["to=2027-06-09", "from"]] as const) {
      await expectInvalid("GET", ARI, await external("GET", `/properties/${property.id}/ari?${query}`, key.secret), field, query);
    }
    await expectUnprocessable("GET", ARI, await external("GET", `/properties/${property.id}/ari?from=2027-06-09&to=2027-06-08`, key.secret), "to");
    await expectUnprocessable("GET", ARI, await external("GET", `/properties/${property.id}/ari?from=2027-01-01&to=2028-01-02`, key.secret), "to");
  }));

Deno.test("ARI needs ari:read, and a key reads only its own properties'", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("channels");
    const b = await tenant("other");
    const property = await createProperty(a.ownerClient);
    const sibling = await createProperty(a.ownerClient);
    const theirs = await createProperty(b.ownerClient);
    const reader = await issueApiKey(a.ownerClient, property.id);
    const key = await issueApiKey(a.ownerClient, property.id, { scopes: ["ari:read"] });
    const path = (id: string) => `/properties/${id}/ari?from=2027-06-01&to=2027-06-02`;

    const denied = await expectProblem("GET", ARI, await external("GET", path(property.id), reader.secret), 403, "insufficient-scope");
    assert.equal((denied as { requiredScope?: string }).requiredScope, "ari:read");
    const own = await expectStatus<Ari>("GET", ARI, await external("GET", path(property.id), key.secret), 200);
    assert.deepEqual([own.roomTypes, own.ratePlans], [[], []]);
    for (const other of [sibling.id, theirs.id]) {
      await expectProblem("GET", ARI, await external("GET", path(other), key.secret), 404, "not-found");
    }
    // A key of all the tenant's properties reads each of them, and none of another tenant's.
    const all = await issueApiKey(a.ownerClient, property.id, { propertyId: undefined, allProperties: true, scopes: ["ari:read"] });
    await expectStatus("GET", ARI, await external("GET", path(sibling.id), all.secret), 200);
    await expectProblem("GET", ARI, await external("GET", path(theirs.id), all.secret), 404, "not-found");
    // A channel's booking is in the next read.
    const roomType = await createRoomType(a.ownerClient, property.id);
    await createUnit(a.ownerClient, property.id, { roomTypeId: roomType.id });
    const plan = await createRatePlan(a.ownerClient, property.id);
    const writer = await issueApiKey(a.ownerClient, property.id, { scopes: ["reservations:write", "ari:read"] });
    await expectStatus("POST", "/v1/external/properties/{id}/reservations", await external("POST", `/properties/${property.id}/reservations`,
      writer.secret, {
        body: {
          roomTypeId: roomType.id, ratePlanId: plan.id, checkIn: "2027-06-01", checkOut: "2027-06-02", channel: "Airbnb",
          externalReference: "HM-1", guest: { firstName: "Li", lastName: "Wei" },
        },
      }), 201);
    const after = await expectStatus<Ari>("GET", ARI, await external("GET", path(property.id), writer.secret), 200);
    assert.deepEqual(after.roomTypes[0]!.availability, [
      { from: "2027-06-01", to: "2027-06-01", available: 0 },
      { from: "2027-06-02", to: "2027-06-02", available: 1 },
    ]);
  }));
