// The rate calendar through the gateway: bulk changes by range and weekday in one
// transaction, read back as they apply; derived plans follow their base; who may write.
import assert from "node:assert/strict";
import { client, expectProblem, expectStatus, representation, type Schemas, withFixture } from "../support/api.ts";
import { createProperty, createRatePlan, createRoomType } from "../support/domain.ts";

type Calendar = Schemas["RateCalendar"];
const CALENDAR = "/v1/rate-plans/{id}/calendar";
const CHANGES = "/v1/rate-calendar";

Deno.test("a weekend rate and a closed-to-arrival day set in one request read back day by day; the same request again changes nothing", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("rate-calendar");
    const property = await createProperty(api);
    const plan = await createRatePlan(api, property.id, { nightlyPrice: 12000, minStay: 1 });
    const changes = {
      changes: [
        { ratePlanId: plan.id, from: "2027-06-01", to: "2027-06-30", weekdays: ["fri", "sat"], price: 18000 },
        { ratePlanId: plan.id, from: "2027-06-08", to: "2027-06-08", closedToArrival: true, minStay: 2 },
      ],
    };
    const written = await expectStatus<{ days: number }>("PATCH", CHANGES, await api.patch("/rate-calendar", changes), 200);
    assert.equal(written.days, 8 + 1, "eight weekend days and one day");

    const read = async () =>
      await expectStatus<Calendar>("GET", CALENDAR, await api.get(`/rate-plans/${plan.id}/calendar?from=2027-06-03&to=2027-06-08`), 200);
    const calendar = await read();
    assert.equal(calendar.currency, plan.currency);
    assert.deepEqual(calendar.days.map((day) => [day.date, day.price, day.minStay, day.closedToArrival]), [
      ["2027-06-03", 12000, 1, false],
      ["2027-06-04", 18000, 1, false],
      ["2027-06-05", 18000, 1, false],
      ["2027-06-06", 12000, 1, false],
      ["2027-06-07", 12000, 1, false],
      ["2027-06-08", 12000, 2, true],
    ]);

    await expectStatus("PATCH", CHANGES, await api.patch("/rate-calendar", changes), 200);
    assert.deepEqual(await read(), calendar, "setting the same values again changes nothing");

    // Null takes a day back to the plan's default.
    await expectStatus("PATCH", CHANGES, await api.patch("/rate-calendar", {
      changes: [{ ratePlanId: plan.id, from: "2027-06-08", to: "2027-06-08", closedToArrival: null, minStay: null }],
    }), 200);
    const reset = (await read()).days.at(-1)!;
    assert.deepEqual([reset.minStay, reset.closedToArrival], [1, false]);
  }));

Deno.test("a request's changes apply in order: of several plans at once, and a later change of the same days wins", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("rate-calendar-order");
    const property = await createProperty(api);
    const first = await createRatePlan(api, property.id, { nightlyPrice: 10000, minStay: 1 });
    const second = await createRatePlan(api, property.id, { nightlyPrice: 20000, minStay: 1 });
    const written = await expectStatus<{ days: number }>("PATCH", CHANGES, await api.patch("/rate-calendar", {
      changes: [
        { ratePlanId: first.id, from: "2027-09-01", to: "2027-09-04", price: 11000 },
        { ratePlanId: second.id, from: "2027-09-01", to: "2027-09-04", price: 21000 },
        { ratePlanId: first.id, from: "2027-09-03", to: "2027-09-05", price: 13000 },
        { ratePlanId: second.id, from: "2027-09-02", to: "2027-09-02", price: null },
      ],
    }), 200);
    assert.equal(written.days, 4 + 4 + 3 + 1, "each change counts the days it set");
    const prices = async (planId: string) =>
      (await expectStatus<Calendar>("GET", CALENDAR, await api.get(`/rate-plans/${planId}/calendar?from=2027-09-01&to=2027-09-05`), 200))
        .days.map((day) => day.price);
    assert.deepEqual(await prices(first.id), [11000, 11000, 13000, 13000, 13000], "the later change wins the days both set");
    assert.deepEqual(await prices(second.id), [21000, 20000, 21000, 21000, 20000], "null takes a day back to the default");
  }));

Deno.test("a derived plan follows its base plan's calendar and sets no price of its own", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("derived-plan");
    const property = await createProperty(api);
    const roomType = await createRoomType(api, property.id);
    const base = await createRatePlan(api, property.id, { nightlyPrice: 10000, roomTypeId: roomType.id });
    const derived = await expectStatus<Schemas["RatePlan"]>("POST", "/v1/rate-plans", await api.post("/rate-plans", {
      propertyId: property.id, name: "Prepaid", code: "PREPAID", currency: base.currency, derivedFromId: base.id, derivedPercent: -12.5,
    }, representation), 201);
    assert.deepEqual([derived.derivedFromId, derived.derivedPercent], [base.id, -12.5]);
    await expectStatus("PATCH", CHANGES, await api.patch("/rate-calendar", {
      changes: [{ ratePlanId: base.id, from: "2027-07-01", to: "2027-07-01", price: 20001 }],
    }), 200);
    const days = await expectStatus<Calendar>("GET", CALENDAR,
      await api.get(`/rate-plans/${derived.id}/calendar?from=2027-07-01&to=2027-07-02`), 200);
    // 20,001 less 12.5 % is 17,500.875; 10,000 less 12.5 % is 8,750.
    assert.deepEqual(days.days.map((day) => day.price), [17501, 8750]);

    const priced = await expectProblem("PATCH", CHANGES, await api.patch("/rate-calendar", {
      changes: [{ ratePlanId: derived.id, from: "2027-07-01", to: "2027-07-01", price: 1 }],
    }), 422, "unprocessable");
    assert.deepEqual(priced.errors?.map((error) => error.path), ["price"]);
    const chained = await api.post("/rate-plans", {
      propertyId: property.id, name: "Chained", code: "CHAIN", currency: base.currency, derivedFromId: derived.id, derivedAmount: -100,
    });
    assert.deepEqual((await expectProblem("POST", "/v1/rate-plans", chained, 422, "unprocessable")).errors?.map((e) => e.path), ["derivedFromId"]);
  }));

Deno.test("calendar refusals: another tenant's plan, staff writing, a range out of order; none of a request's changes stays", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const owned = await tenant("calendar-refusals");
    const api = owned.ownerClient;
    const { ownerClient: theirs } = await tenant("calendar-other");
    const plan = await createRatePlan(api, (await createProperty(api)).id, { nightlyPrice: 12000 });
    const foreign = await createRatePlan(theirs, (await createProperty(theirs)).id);

    const mixed = await api.patch("/rate-calendar", {
      changes: [
        { ratePlanId: plan.id, from: "2027-08-01", to: "2027-08-02", price: 1 },
        { ratePlanId: foreign.id, from: "2027-08-01", to: "2027-08-02", price: 1 },
      ],
    });
    await expectProblem("PATCH", CHANGES, mixed, 422, "unknown-reference");
    const untouched = await expectStatus<Calendar>("GET", CALENDAR, await api.get(`/rate-plans/${plan.id}/calendar?from=2027-08-01&to=2027-08-01`), 200);
    assert.equal(untouched.days[0]!.price, 12000, "the first change was undone with the second");

    const staff = client(await memberOf(owned, "staff"), owned.tenantId);
    await expectProblem("PATCH", CHANGES,
      await staff.patch("/rate-calendar", { changes: [{ ratePlanId: plan.id, from: "2027-08-01", to: "2027-08-01", price: 1 }] }), 403, "forbidden");
    await expectStatus("GET", CALENDAR, await staff.get(`/rate-plans/${plan.id}/calendar?from=2027-08-01&to=2027-08-01`), 200);
    await expectProblem("GET", CALENDAR, await api.get(`/rate-plans/${plan.id}/calendar?from=2027-08-02&to=2027-08-01`), 422, "unprocessable");
    await expectProblem("GET", CALENDAR, await api.get(`/rate-plans/${foreign.id}/calendar?from=2027-08-01&to=2027-08-01`), 404, "not-found");
  }));
