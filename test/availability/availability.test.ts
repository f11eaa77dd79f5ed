// Selling by date through the gateway: availability by room type for a party, each plan's
// quote from its calendar, and a booking made from it end to end.
import assert from "node:assert/strict";
import { expectMinimal, expectProblem, expectStatus, representation, type Schemas, withFixture } from "../support/api.ts";
import {
  createGuest,
  createProperty,
  createRatePlan,
  createRoomType,
  createUnit,
  createUnitBlock,
  type Reservation,
  stepReservation,
} from "../support/domain.ts";

type Availability = Schemas["Availability"];
const AVAILABILITY = "/v1/availability";

Deno.test("a stay found through availability, priced with a weekend rate, booked by room type, given a unit and checked in", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("sell-by-date");
    const property = await createProperty(api);
    const double = await createRoomType(api, property.id, { code: "DBL", name: "Double", standardOccupancy: 2, maxOccupancy: 3 });
    const suite = await createRoomType(api, property.id, { code: "STE", name: "Suite", standardOccupancy: 2, maxOccupancy: 4 });
    const d1 = await createUnit(api, property.id, { roomTypeId: double.id, name: "101", capacity: 3 });
    await createUnit(api, property.id, { roomTypeId: double.id, name: "102", capacity: 3 });
    const s1 = await createUnit(api, property.id, { roomTypeId: suite.id, name: "301", capacity: 4 });
    const bar = await createRatePlan(api, property.id, { code: "BAR", nightlyPrice: 12000, extraAdultPrice: 3000 });
    const suiteOnly = await createRatePlan(api, property.id, { code: "STE-BAR", nightlyPrice: 25000, roomTypeId: suite.id });
    await expectStatus("PATCH", "/v1/rate-calendar", await api.patch("/rate-calendar", {
      changes: [
        { ratePlanId: bar.id, from: "2027-06-01", to: "2027-06-30", weekdays: ["fri", "sat"], price: 18000 },
        { ratePlanId: bar.id, from: "2027-06-03", to: "2027-06-03", closedToArrival: true },
      ],
    }), 200);
    await createUnitBlock(api, s1.id, "2027-06-05", "2027-06-06", { reason: "Balcony repair" });

    // Arriving on the closed-to-arrival Thursday: BAR is not bookable, and says why.
    const thursday = await expectStatus<Availability>("GET", AVAILABILITY,
      await api.get(`/availability?propertyId=${property.id}&arrival=2027-06-03&departure=2027-06-07&adults=2`), 200);
    const barOnThursday = thursday.roomTypes.find((type) => type.code === "DBL")!.ratePlans.find((plan) => plan.code === "BAR")!;
    assert.equal(barOnThursday.bookable, false);
    assert.deepEqual(barOnThursday.restrictions, [{ code: "closed_to_arrival", date: "2027-06-03" }]);

    // Friday to Monday, three adults.
    const found = await expectStatus<Availability>("GET", AVAILABILITY,
      await api.get(`/availability?propertyId=${property.id}&arrival=2027-06-04&departure=2027-06-07&adults=3`), 200);
    assert.equal(found.nights, 3);
    const [dbl, ste] = found.roomTypes;
    assert.deepEqual([dbl!.code, dbl!.available, dbl!.fitsParty, dbl!.freeUnits.map((unit) => unit.name)], ["DBL", 2, true, ["101", "102"]]);
    assert.deepEqual([ste!.code, ste!.available, ste!.freeUnits], ["STE", 0, []], "the suite's one unit is blocked on Saturday");
    assert.deepEqual(dbl!.ratePlans.map((plan) => plan.code), ["BAR"], "a plan for the suite alone is not offered for the double");
    assert.deepEqual(ste!.ratePlans.map((plan) => plan.code), ["BAR", "STE-BAR"]);
    const quote = dbl!.ratePlans[0]!;
    assert.equal(quote.bookable, true);
    assert.deepEqual(quote.nights, [
      { date: "2027-06-04", amount: 18000 + 3000 },
      { date: "2027-06-05", amount: 18000 + 3000 },
      { date: "2027-06-06", amount: 12000 + 3000 },
    ]);
    assert.equal(quote.total, 57000);
    assert.notEqual(suiteOnly.id, quote.ratePlanId);

    // Booked by room type on the quoted plan, without a price: the calendar's.
    const guest = await createGuest(api);
    const booked = await expectStatus<Reservation>("POST", "/v1/reservations", await api.post("/reservations", {
      propertyId: property.id, roomTypeId: dbl!.roomTypeId, ratePlanId: quote.ratePlanId, guestId: guest.id,
      checkIn: found.arrival, checkOut: found.departure, adults: 3, status: "confirmed",
    }, representation), 201);
    assert.deepEqual([booked.totalAmount, booked.priceOverridden, booked.unitId], [57000, false, null]);

    const after = await expectStatus<Availability>("GET", AVAILABILITY,
      await api.get(`/availability?propertyId=${property.id}&arrival=2027-06-04&departure=2027-06-07&adults=3`), 200);
    assert.equal(after.roomTypes[0]!.available, 1, "the booking holds one of the two doubles");

    await expectMinimal("PATCH", "/v1/reservations/{id}", await api.patch(`/reservations/${booked.id}`, { unitId: d1.id }), 204);
    const checkedIn = await stepReservation(api, booked.id, "check-in");
    assert.deepEqual([checkedIn.status, checkedIn.unitId, checkedIn.totalAmount], ["checked_in", d1.id, 57000]);

    // Booking the Thursday arrival on BAR is refused with the restriction named.
    const refused = await api.post("/reservations", {
      propertyId: property.id, roomTypeId: double.id, ratePlanId: bar.id, guestId: guest.id, checkIn: "2027-06-03", checkOut: "2027-06-04",
    });
    const problem = await expectProblem("POST", "/v1/reservations", refused, 422, "rate-restricted");
    assert.deepEqual(problem.restrictions, [{ code: "closed_to_arrival", date: "2027-06-03" }]);
  }));

Deno.test("availability refusals: dates out of order, another tenant's property", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("availability-refusals");
    const { ownerClient: theirs } = await tenant("availability-other");
    const property = await createProperty(api);
    const foreign = await createProperty(theirs);
    const inverted = await expectProblem("GET", AVAILABILITY,
      await api.get(`/availability?propertyId=${property.id}&arrival=2027-06-04&departure=2027-06-04`), 422, "unprocessable");
    assert.deepEqual(inverted.errors?.map((error) => error.path), ["departure"]);
    await expectProblem("GET", AVAILABILITY, await api.get(`/availability?propertyId=${property.id}&arrival=2027-06-04`), 400, "validation");
    const unknown = await expectProblem("GET", AVAILABILITY,
      await api.get(`/availability?propertyId=${foreign.id}&arrival=2027-06-04&departure=2027-06-05`), 422, "unknown-reference");
    assert.deepEqual(unknown.errors?.map((error) => error.path), ["propertyId"]);
  }));
