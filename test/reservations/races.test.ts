// Concurrent requests for the same thing: the database decides who wins, and everyone
// else gets the documented refusal. Each case ends by checking what is stored: one
// stay, one check-in and one notification, one change.
import assert from "node:assert/strict";
import { expectMinimal, expectProblem, expectStatus, type Page, representation, withFixture } from "../support/api.ts";
import { createStay, readReservation, type Reservation, stepReservation } from "../support/domain.ts";
import { eventsFor, expandEvents } from "../support/notifications.ts";

const RESERVATIONS = "/v1/reservations";
const RESERVATION = "/v1/reservations/{id}";

function statusCounts(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of responses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

Deno.test("50 concurrent creates of overlapping reservations on one unit: one is created, 49 answer 409, the unit holds one stay", () =>
  withFixture(async ({ tenant, sql }) => {
    const { ownerClient: api, tenantId } = await tenant("overlap-race");
    // The stay's own reservation is cancelled, so the unit is free for the race.
    const stay = await createStay(api);
    await stepReservation(api, stay.reservation.id, "cancel");
    const body = (i: number) => ({
      propertyId: stay.property.id,
      unitId: stay.unit.id,
      guestId: stay.guest.id,
      // Every pair of these overlaps: all cover the night of 2027-05-12.
      checkIn: `2027-05-${String(10 + (i % 3)).padStart(2, "0")}`,
      checkOut: `2027-05-${String(13 + (i % 2)).padStart(2, "0")}`,
      status: "confirmed",
    });
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => api.post("/reservations", body(i))));

    assert.deepEqual(statusCounts(responses), { 201: 1, 409: 49 });
    for (const response of responses) {
      if (response.status === 201) await expectMinimal("POST", RESERVATIONS, response, 201);
      else await expectProblem("POST", RESERVATIONS, response, 409, "unit-already-booked");
    }
    const listed = await expectStatus<Page<Reservation>>(
      "GET",
      RESERVATIONS,
      await api.get(`/reservations?unitId=${stay.unit.id}&status=confirmed`),
      200,
    );
    assert.equal(listed.data.length, 1, "the unit's calendar holds one confirmed stay");
    const [stored] = await sql<{ count: number }[]>`
      select count(*)::int as count from public.reservations
      where tenant_id = ${tenantId} and unit_id = ${stay.unit.id} and status <> 'cancelled'`;
    assert.equal(stored?.count, 1, "one stay stored, none half-made");
  }));

Deno.test("20 concurrent check-ins of one reservation: one succeeds, 19 answer 409, one check-in notification", () =>
  withFixture(async ({ tenant, sql }) => {
    const { ownerClient: api, tenantId } = await tenant("check-in-race");
    const stay = await createStay(api, { status: "confirmed" });
    const id = stay.reservation.id;
    const responses = await Promise.all(Array.from({ length: 20 }, () => api.post(`/reservations/${id}/check-in`)));

    assert.deepEqual(statusCounts(responses), { 204: 1, 409: 19 });
    for (const response of responses) {
      if (response.status === 204) await expectMinimal("POST", `${RESERVATION}/check-in`, response, 204);
      else await expectProblem("POST", `${RESERVATION}/check-in`, response, 409, "lifecycle-transition-refused");
    }
    assert.equal((await readReservation(api, id)).body.status, "checked_in");
    assert.deepEqual((await eventsFor(sql, id)).map((event) => event.templateKey), ["checkin_reminder"], "exactly one event");
    await expandEvents();
    const notifications = await sql<{ template_key: string }[]>`
      select template_key from public.notifications where tenant_id = ${tenantId} and reservation_id = ${id}`;
    assert.deepEqual(notifications.map((row) => row.template_key), ["checkin_reminder"], "exactly one notification");
    const [queued] = await sql<{ jobs: number }[]>`
      select count(*)::int as jobs from pgmq.q_notifications q
      join public.notifications n on n.id = (q.message ->> 'notificationId')::uuid
      where n.tenant_id = ${tenantId} and n.reservation_id = ${id}`;
    assert.equal(queued?.jobs, 1, "exactly one job queued for it");
  }));

Deno.test("20 concurrent PATCHes with the same If-Match: one succeeds, 19 answer 412, and the stored reservation is that one's", () =>
  withFixture(async ({ tenant }) => {
    const { ownerClient: api } = await tenant("if-match-race");
    const stay = await createStay(api);
    const id = stay.reservation.id;
    const { etag } = await readReservation(api, id);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      api.patch(`/reservations/${id}`, { notes: `writer ${i}` }, { "if-match": etag, ...representation })
    ));

    assert.deepEqual(statusCounts(responses), { 200: 1, 412: 19 });
    let winner: Reservation | undefined;
    for (const response of responses) {
      if (response.status === 200) winner = await expectStatus<Reservation>("PATCH", RESERVATION, response, 200);
      else await expectProblem("PATCH", RESERVATION, response, 412, "stale-etag");
    }
    const stored = await readReservation(api, id);
    assert.equal(stored.body.notes, winner!.notes, "the stored notes are the winner's");
    assert.notEqual(stored.etag, etag);
  }));
