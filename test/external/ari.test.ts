// What a channel mirrors (GET /v1/external/properties/{id}/ari): per room type the rooms
// left each night, per rate plan its prices and restrictions, one value a day.
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

Deno.test("ARI: each room type's rooms left and each plan's calendar, one value for each day asked", () =>
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
    // 8 to 14 June: the stay takes a double on the 10th and 11th, the block the single on
    // the 11th and 12th.
    assert.deepEqual(ari.roomTypes.map((type) => [type.code, type.units, type.available]), [
      ["DBL", 2, [2, 2, 1, 1, 2, 2, 2]],
      ["SGL", 1, [1, 1, 1, 0, 0, 1, 1]],
    ]);
    const [bar, nrf] = ari.ratePlans;
    assert.deepEqual([bar!.code, bar!.roomTypeId, bar!.currency, nrf!.code, nrf!.roomTypeId], ["BAR", null, "EUR", "NRF", double.id]);
    assert.deepEqual([bar!.price, bar!.closedToArrival], [
      [12000, 12000, 12000, 18000, 18000, 12000, 12000],
      [false, false, true, false, false, false, false],
    ]);
    const week = <T>(value: T) => Array<T>(7).fill(value);
    assert.deepEqual(nrf, {
      ratePlanId: doublesOnly.id, code: "NRF", name: doublesOnly.name, roomTypeId: double.id, currency: "EUR",
      price: week(10000), extraAdultPrice: week(0), extraChildPrice: week(0), minStay: week(1), maxStay: week(null),
      closedToArrival: week(false), closedToDeparture: week(false), closed: week(false),
    });

    // Each night's rooms left are what availability says of a one-night stay.
    for (let night = "2027-06-08", i = 0; night <= "2027-06-14"; night = addDays(night, 1), i++) {
      const one = await expectStatus<Schemas["Availability"]>("GET", "/v1/availability",
        await owner.get(`/availability?propertyId=${property.id}&arrival=${night}&departure=${addDays(night, 1)}&adults=1`), 200);
      for (const type of ari.roomTypes) {
        assert.equal(type.available[i], one.roomTypes.find((t) => t.roomTypeId === type.roomTypeId)!.available, `${type.code} on ${night}`);
      }
    }

    // A stay and a block that began before the first day asked, and end after the last.
    const one = await read("2027-06-11", "2027-06-11");
    assert.deepEqual(one.roomTypes.map((type) => type.available), [[1], [0]]);

    // A leap year: a value for each of its 366 days. A unit out of service leaves its type's count.
    const year = await read("2028-01-01", "2028-12-31");
    assert.deepEqual(year.roomTypes[0]!.available, Array(366).fill(2));
    assert.deepEqual(year.ratePlans[1]!.price, Array(366).fill(10000));
    assert.equal((await owner.patch(`/units/${doubles[0]!.id}`, { status: "out_of_service" })).status, 204);
    const fewer = await read("2028-01-01", "2028-01-02");
    assert.deepEqual([fewer.roomTypes[0]!.units, fewer.roomTypes[0]!.available], [1, [1, 1]]);

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
    assert.deepEqual(after.roomTypes[0]!.available, [0, 1]);
  }));
