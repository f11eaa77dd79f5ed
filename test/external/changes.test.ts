// What a channel manager catches up with (GET /v1/external/changes): the log of its
// properties' availability, rates and reservations after a cursor, one change per
// transaction and subject, in order, never a change behind a cursor already given.
import assert from "node:assert/strict";
import { expectInvalid, expectProblem, expectStatus, expectUnprocessable, type Schemas, withFixture } from "../support/api.ts";
import { createProperty, createRatePlan, createRoomType, createUnit, createUnitBlock } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";

const CHANGES = "/v1/external/changes";
type Changes = Schemas["ChannelChanges"];
type Change = Schemas["ChannelChange"];
const EVERY = { scopes: ["reservations:read", "reservations:write", "ari:read"] };

async function read(key: string, query = ""): Promise<Changes> {
  return await expectStatus<Changes>("GET", CHANGES, await external("GET", `/changes${query}`, key), 200);
}

// Every change after `since`, page by page.
async function readPages(key: string, since: string | undefined, limit: number): Promise<{ changes: Change[]; cursor: string }> {
  const changes: Change[] = [];
  let cursor = since;
  for (;;) {
    const page = await read(key, `?limit=${limit}${cursor ? `&since=${cursor}` : ""}`);
    changes.push(...page.data);
    cursor = page.nextCursor;
    if (!page.hasMore) return { changes, cursor: cursor! };
  }
}

// The same once at least `atLeast` changes show: a change shows when every transaction
// older than it has ended, and a scheduled job of the database's own (pg_cron's) may be
// running at the moment of a read.
async function readAll(key: string, since?: string, limit = 100, atLeast = 1): Promise<{ changes: Change[]; cursor: string }> {
  for (let attempt = 0; ; attempt++) {
    const read = await readPages(key, since, limit);
    if (read.changes.length >= atLeast || attempt === 20) return read;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const brief = (change: Change) =>
  [change.kind, change.roomTypeId ?? change.ratePlanId ?? change.reservationId, change.from, change.to];

Deno.test("changes: a bulk calendar update is one change per plan, a booking its nights and itself, a block its nights, in order", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("changes");
    const owner = a.ownerClient;
    const property = await createProperty(owner);
    const roomType = await createRoomType(owner, property.id);
    const unit = await createUnit(owner, property.id, { roomTypeId: roomType.id });
    await createUnit(owner, property.id, { roomTypeId: roomType.id });
    const plan = await createRatePlan(owner, property.id);
    const derived = await createRatePlan(owner, property.id, { derivedFromId: plan.id, derivedPercent: -10, nightlyPrice: undefined });
    const key = await issueApiKey(owner, property.id, EVERY);

    // From the start: what setting the property up changed, every day of the type and plans.
    const setUp = await readAll(key.secret, undefined, 100, 4);
    assert.deepEqual(setUp.changes.map(brief).filter(([kind]) => kind !== "reservation"), [
      ["availability", roomType.id, null, null],
      ["availability", roomType.id, null, null],
      ["rates", plan.id, null, null],
      ["rates", derived.id, null, null],
    ]);
    assert.ok(setUp.changes.every((change) => change.propertyId === property.id));
    // Nothing new: the same cursor, no changes.
    const idle = await read(key.secret, `?since=${setUp.cursor}`);
    assert.deepEqual([idle.data, idle.hasMore, idle.nextCursor], [[], false, setUp.cursor]);

    // 365 days of the plan in one request: one change for it and one for the plan that follows it.
    assert.equal((await owner.patch("/rate-calendar", {
      changes: [
        { ratePlanId: plan.id, from: "2028-01-01", to: "2028-12-30", price: 15000 },
        { ratePlanId: plan.id, from: "2028-03-01", to: "2028-03-31", weekdays: ["sat"], closedToArrival: true },
      ],
    })).status, 200);
    const bulk = await readAll(key.secret, setUp.cursor, 100, 2);
    assert.deepEqual(bulk.changes.map(brief), [
      ["rates", plan.id, "2028-01-01", "2028-12-30"],
      ["rates", derived.id, "2028-01-01", "2028-12-30"],
    ]);

    // A channel's booking: the type's nights and the reservation.
    const booked = await expectStatus<Schemas["Reservation"]>("POST", "/v1/external/properties/{id}/reservations",
      await external("POST", `/properties/${property.id}/reservations`, key.secret, {
        body: {
          roomTypeId: roomType.id, ratePlanId: plan.id, checkIn: "2027-06-09", checkOut: "2027-06-12", channel: "Airbnb",
          externalReference: "HM-CHANGES", guest: { firstName: "Ana", lastName: "Log" },
        },
        headers: { prefer: "return=representation" },
      }), 201);
    await createUnitBlock(owner, unit.id, "2027-07-01", "2027-07-03");
    const later = await readAll(key.secret, bulk.cursor, 100, 3);
    assert.deepEqual(later.changes.map(brief), [
      ["availability", roomType.id, "2027-06-09", "2027-06-11"],
      ["reservation", booked.id, "2027-06-09", "2027-06-11"],
      ["availability", roomType.id, "2027-07-01", "2027-07-02"],
    ]);

    // Cancelled: the nights come back, and the stay changed.
    await expectStatus("POST", "/v1/external/reservations/{id}/cancel",
      await external("POST", `/reservations/${booked.id}/cancel`, key.secret, { body: {} }), 204);
    assert.deepEqual((await readAll(key.secret, later.cursor, 100, 2)).changes.map(brief), [
      ["availability", roomType.id, "2027-06-09", "2027-06-11"],
      ["reservation", booked.id, "2027-06-09", "2027-06-11"],
    ]);

    // A page at a time reads the same, in the same order.
    const whole = await readAll(key.secret, undefined, 100, 11);
    assert.equal(whole.changes.length, 11, "every change above, once");
    const paged = await readAll(key.secret, undefined, 1, whole.changes.length);
    assert.deepEqual(paged.changes, whole.changes);
    assert.equal(paged.cursor, whole.cursor);
  }));

Deno.test("changes: a key sees its properties' only, reservations only with a scope that reads them; an old or foreign cursor is refused", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("changes");
    const b = await tenant("other");
    const property = await createProperty(a.ownerClient);
    const sibling = await createProperty(a.ownerClient);
    await createUnit(a.ownerClient, property.id);
    await createUnit(a.ownerClient, sibling.id);
    await createUnit(b.ownerClient, (await createProperty(b.ownerClient)).id);
    const ariOnly = await issueApiKey(a.ownerClient, property.id, { scopes: ["ari:read"] });
    const reader = await issueApiKey(a.ownerClient, property.id);

    const seen = (await readAll(ariOnly.secret)).changes;
    assert.ok(seen.length > 0);
    assert.ok(seen.every((change) => change.propertyId === property.id && change.kind !== "reservation"));
    await expectProblem("GET", CHANGES, await external("GET", "/changes", reader.secret), 403, "insufficient-scope");
    assert.deepEqual((await read(ariOnly.secret, `?propertyId=${sibling.id}`)).data, []);

    const old = btoa(`1.1.${Math.floor(Date.now() / 1000) - 8 * 86400}`).replace(/=+$/, "");
    await expectProblem("GET", CHANGES, await external("GET", `/changes?since=${old}`, ariOnly.secret), 410, "cursor-expired");
    // Of the cursor's shape but no cursor a page gave: a 422; not even of its shape: a 400.
    for (const since of ["0", "not-a-cursor", btoa("1.2").replace(/=+$/, "")]) {
      await expectUnprocessable("GET", CHANGES, await external("GET", `/changes?since=${since}`, ariOnly.secret), "since", since);
    }
    await expectInvalid("GET", CHANGES, await external("GET", "/changes?since=%2F%2F", ariOnly.secret), "since");
    await expectInvalid("GET", CHANGES, await external("GET", "/changes?limit=1001", ariOnly.secret), "limit");
  }));

Deno.test("changes: a change committed while an older transaction still runs waits for it, so no cursor ever passes a change", () =>
  withFixture(async ({ tenant, sql }) => {
    const a = await tenant("changes");
    const property = await createProperty(a.ownerClient);
    const roomType = await createRoomType(a.ownerClient, property.id);
    await createUnit(a.ownerClient, property.id, { roomTypeId: roomType.id });
    const plan = await createRatePlan(a.ownerClient, property.id);
    const key = await issueApiKey(a.ownerClient, property.id, EVERY);
    const start = (await readAll(key.secret)).cursor;

    // An operator's transaction writes a day of the plan and stays open...
    const reserved = await sql.reserve();
    try {
      await reserved`begin`;
      await reserved`insert into public.rate_plan_days (tenant_id, rate_plan_id, day, price)
                     values (${a.tenantId}, ${plan.id}, '2027-05-01', 9900)`;
      // ...while a later one, a block, commits.
      const unit = await createUnit(a.ownerClient, property.id, { roomTypeId: roomType.id });
      const meanwhile = await readAll(key.secret, start, 100, 0);
      assert.deepEqual(meanwhile.changes, [], "the block's change waits for the older transaction");
      assert.equal(meanwhile.cursor, start);
      await reserved`commit`;
      const after = await readAll(key.secret, start, 100, 2);
      assert.deepEqual(after.changes.map(brief), [
        ["rates", plan.id, "2027-05-01", "2027-05-01"],
        ["availability", roomType.id, null, null],
      ]);
      assert.equal(unit.roomTypeId, roomType.id);
    } finally {
      reserved.release();
    }
  }));
