// The reservation list's exact total where it comes from the status tallies (a list by
// status, property, both or neither; supabase/migrations/20261130000800_reservation_status_tallies.sql):
// it is the number of rows the list holds, through arrivals, steps, an operator's move, deletions,
// concurrent check-ins in one property and the tallies' fold, as counting them says.
import assert from "node:assert/strict";
import { type Client, expectStatus, type Page, withFixture } from "../support/api.ts";
import { createGuest, createProperty, createUnit, type Reservation, reservationIn, stepReservation } from "../support/domain.ts";

const RESERVATIONS = "/v1/reservations";

// The list's total as it answers by default (exact), beside the rows it holds (every
// test here has fewer than 100) and the total counted row by row (count=estimated counts
// exactly up to 1,000).
async function totals(api: Client, query: string) {
  const read = async (prefer?: string) =>
    await expectStatus<Page<Reservation>>(
      "GET",
      RESERVATIONS,
      await api.get(`${RESERVATIONS.slice(3)}?limit=100${query}`, undefined, prefer ? { prefer } : {}),
      200,
    );
  const exact = await read();
  const counted = await read("count=estimated");
  return { total: exact.pagination.total, rows: exact.data.length, counted: counted.pagination.total };
}

async function expectTotals(api: Client, queries: Record<string, number>, moment: string) {
  for (const [query, expected] of Object.entries(queries)) {
    assert.deepEqual(await totals(api, query), { total: expected, rows: expected, counted: expected }, `${moment}: ${query || "no filter"}`);
  }
}

Deno.test("GET /v1/reservations: the exact total by status, property, both or neither follows arrivals, steps, moves and deletions", () =>
  withFixture(async ({ tenant, sql }) => {
    const ctx = await tenant("tallied-totals");
    const api = ctx.ownerClient;
    const harbour = await createProperty(api);
    const hillside = await createProperty(api);
    const unit = await createUnit(api, harbour.id);
    const guest = await createGuest(api);
    const at = { propertyId: harbour.id, unitId: unit.id, guestId: guest.id, ratePlanId: null };
    const pending = await reservationIn(api, at, "pending", "2027-06-01");
    const confirmed = await reservationIn(api, at, "confirmed", "2027-06-05");
    await reservationIn(api, at, "checked_in", "2027-06-09");
    await reservationIn(api, at, "cancelled", "2027-06-13");
    const elsewhere = await reservationIn(api, { ...at, propertyId: hillside.id, unitId: null }, "confirmed", "2027-06-01");

    const h = `&propertyId=${harbour.id}`;
    const l = `&propertyId=${hillside.id}`;
    await expectTotals(api, {
      "": 5, "&status=confirmed": 2, "&status=pending,confirmed": 3, "&status=no_show": 0, [h]: 4, [l]: 1,
      [`${h}&status=confirmed`]: 1, [`${l}&status=confirmed,checked_in`]: 1,
    }, "as created");

    await stepReservation(api, pending.id, "confirm");
    await stepReservation(api, confirmed.id, "no-show");
    // The API keeps a stay in its property; an operator may move one in SQL.
    await sql`update public.reservations set property_id = ${hillside.id}, unit_id = null, room_type_id = null where id = ${pending.id}`;
    assert.equal((await api.delete(`${RESERVATIONS.slice(3)}/${elsewhere.id}`)).status, 204, "a stay is deleted");
    await expectTotals(api, {
      "": 4, "&status=confirmed": 1, "&status=no_show": 1, "&status=pending": 0, [h]: 3, [l]: 1,
      [`${l}&status=confirmed`]: 1, [`${h}&status=confirmed`]: 0,
    }, "after steps, a move and a deletion");

    // Check-ins in one property at once: the tallies are written, not updated, so none
    // waits for another, and every one counts.
    const rooms = await Promise.all(Array.from({ length: 6 }, () => createUnit(api, harbour.id)));
    const arrivals = await Promise.all(
      rooms.map((room, n) => reservationIn(api, { ...at, unitId: room.id }, "confirmed", `2027-07-${String(10 + n).padStart(2, "0")}`)),
    );
    await Promise.all(arrivals.map((stay) => stepReservation(api, stay.id, "check-in")));
    await expectTotals(api, { "": 10, "&status=checked_in": 7, [`${h}&status=checked_in`]: 7, "&status=confirmed": 1 }, "after concurrent check-ins");

    // The fold leaves one row a property and status, and every total as it was.
    await sql`select private.fold_reservation_status_tallies()`;
    const [keys] = await sql<{ repeated: number }[]>`
      select count(*)::integer as repeated from (
        select from public.reservation_status_tallies where tenant_id = ${ctx.tenantId}
        group by property_id, status having count(*) > 1) as keys`;
    assert.equal(keys?.repeated, 0, "one row a property and status");
    await expectTotals(api, { "": 10, "&status=checked_in": 7, [h]: 9, [l]: 1, "&status=no_show": 1 }, "after the fold");

    // A filter the tallies do not hold is counted, and agrees.
    await expectTotals(api, { [`&unitId=${unit.id}`]: 3, "&from=2027-07-14": 4, [`&guestId=${guest.id}&status=checked_in`]: 7 }, "other filters");
  }));
