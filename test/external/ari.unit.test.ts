// How the API sets out what private.channel_ari reads: holds counted into rooms left
// each night, a plan's set days over its defaults.
import assert from "node:assert/strict";
import { type HeldAri, nightByNight } from "../../src/external/ari.ts";

const defaults = {
  price: 12000,
  extraAdultPrice: 2500,
  extraChildPrice: 0,
  minStay: 1,
  maxStay: null,
  closedToArrival: false,
  closedToDeparture: false,
  closed: false,
};
const plan = { ratePlanId: "p", code: "BAR", name: "Best available", roomTypeId: null, currency: "EUR" as const };
const held = (roomTypes: HeldAri["roomTypes"], ratePlans: HeldAri["ratePlans"] = []): HeldAri =>
  ({ propertyId: "x", from: "2027-06-01", to: "2027-06-05", roomTypes, ratePlans });
const type = { roomTypeId: "t", code: "DBL", name: "Double" };

Deno.test("each night's rooms left are the units less the holds that take it, never below 0", () => {
  const ari = nightByNight(held([
    // A stay from before the first day to the 2nd, one on the 2nd and 3rd, one from the 3rd
    // past the last day, a block on the 3rd: three on the 3rd, of two units.
    { ...type, units: 2, holdStarts: [-3, 1, 2, 2], holdEnds: [2, 3, 9, 3] },
    { ...type, roomTypeId: "u", code: "STE", units: 1, holdStarts: [], holdEnds: [] },
  ]), 5);
  assert.deepEqual(ari.roomTypes.map((t) => [t.code, t.units, t.available]), [
    ["DBL", 2, [1, 0, 0, 1, 1]],
    ["STE", 1, [1, 1, 1, 1, 1]],
  ]);
  assert.equal("holdStarts" in ari.roomTypes[0]!, false);
});

Deno.test("a plan's value is its default but on the days that change it", () => {
  const ari = nightByNight(held([], [
    {
      ...plan,
      defaults,
      changes: {
        price: { days: [1, 4], values: [18000, 9000] },
        minStay: { days: [1], values: [2] },
        maxStay: { days: [4], values: [7] },
        closedToArrival: { days: [1], values: [true] },
        closed: { days: [4], values: [true] },
        extraChildPrice: { days: [], values: [] },
      },
    },
    { ...plan, ratePlanId: "q", code: "NRF", defaults: { ...defaults, price: 10000 }, changes: {} },
  ]), 5);
  const [bar, nrf] = ari.ratePlans;
  assert.deepEqual(bar, {
    ...plan,
    price: [12000, 18000, 12000, 12000, 9000],
    extraAdultPrice: [2500, 2500, 2500, 2500, 2500],
    extraChildPrice: [0, 0, 0, 0, 0],
    minStay: [1, 2, 1, 1, 1],
    maxStay: [null, null, null, null, 7],
    closedToArrival: [false, true, false, false, false],
    closedToDeparture: [false, false, false, false, false],
    closed: [false, false, false, false, true],
  });
  assert.deepEqual(nrf!.price, [10000, 10000, 10000, 10000, 10000]);
  assert.deepEqual(["defaults" in nrf!, "changes" in nrf!], [false, false]);
});
