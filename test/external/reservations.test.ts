// What an integration reads (GET /v1/external/reservations[/{id}]): its key's property
// only, by check-in or by last change, in the list envelope the session API uses.
import assert from "node:assert/strict";
import { expectInvalid, expectProblem, expectStatus, MALFORMED_ID, type Page, UNKNOWN_ID, withFixture } from "../support/api.ts";
import { createGuest, createProperty, createReservation, createStay, type Reservation, reservationIn } from "../support/domain.ts";
import { external, issueApiKey } from "../support/integration.ts";

const LIST = "/v1/external/reservations";
const ONE = "/v1/external/reservations/{id}";

Deno.test("the list holds the key's property's reservations only; filters by status, dates and updatedSince", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("integration");
    const b = await tenant("other");
    const stay = await createStay(a.ownerClient, { status: "confirmed", checkIn: "2027-05-01", checkOut: "2027-05-04" });
    const at = { propertyId: stay.property.id, unitId: stay.unit.id, guestId: stay.guest.id, ratePlanId: stay.ratePlan.id };
    const later = await reservationIn(a.ownerClient, at, "pending", "2027-05-10");
    const cancelled = await reservationIn(a.ownerClient, at, "cancelled", "2027-05-20");
    // Same tenant, another property; and another tenant.
    const hillside = await createProperty(a.ownerClient);
    await createReservation(a.ownerClient, { propertyId: hillside.id, guestId: (await createGuest(a.ownerClient)).id });
    await createStay(b.ownerClient);
    const key = await issueApiKey(a.ownerClient, stay.property.id);
    const list = async (query = "") =>
      await expectStatus<Page<Reservation>>("GET", LIST, await external("GET", `/reservations${query}`, key.secret), 200);

    const all = await list();
    assert.deepEqual(all.data.map((row) => row.id), [stay.reservation.id, later.id, cancelled.id], "by check-in");
    assert.deepEqual(all.pagination, { limit: 20, offset: 0, total: 3, hasMore: false });
    assert.ok(all.data.every((row) => row.propertyId === stay.property.id));

    const live = await list("?status=pending,confirmed");
    assert.deepEqual(live.data.map((row) => row.id), [stay.reservation.id, later.id]);
    assert.equal(live.pagination.total, 2, "the total counts the key's property alone");
    assert.deepEqual((await list("?from=2027-05-05&to=2027-05-15")).data.map((row) => row.id), [later.id]);
    const second = await list("?limit=1&offset=1");
    assert.deepEqual(second.data.map((row) => row.id), [later.id]);
    assert.deepEqual(second.pagination, { limit: 1, offset: 1, total: 3, hasMore: true });

    // A change moves a reservation to the end of an updatedSince sync.
    const since = new Date().toISOString();
    assert.deepEqual((await list(`?updatedSince=${encodeURIComponent(since)}`)).data, []);
    assert.equal((await a.ownerClient.patch(`/reservations/${stay.reservation.id}`, { notes: "late arrival" })).status, 204);
    const changed = await list(`?updatedSince=${encodeURIComponent(since)}`);
    assert.deepEqual(changed.data.map((row) => [row.id, row.notes]), [[stay.reservation.id, "late arrival"]]);

    for (const [query, field] of [["?status=lost", "status.0"], ["?from=May", "from"], ["?updatedSince=yesterday", "updatedSince"],
      ["?propertyId=hillside", "propertyId"], ["?unitId=" + stay.unit.id, "unitId"], ["?limit=500", "limit"]] as const) {
      await expectInvalid("GET", LIST, await external("GET", `/reservations${query}`, key.secret), field, query);
    }
  }));

Deno.test("one reservation: the key's property's, with its balance; another property's or tenant's answers as an unknown id", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("integration");
    const b = await tenant("other");
    const stay = await createStay(a.ownerClient, { status: "confirmed" });
    const hillside = await createStay(a.ownerClient);
    const theirs = await createStay(b.ownerClient);
    const key = await issueApiKey(a.ownerClient, stay.property.id);

    const response = await external("GET", `/reservations/${stay.reservation.id}`, key.secret);
    const read = await expectStatus<Reservation>("GET", ONE, response, 200);
    assert.match(response.headers.get("etag") ?? "", /^"[A-Za-z0-9_-]+"$/);
    const session = await expectStatus<Reservation>("GET", "/v1/reservations/{id}", await a.ownerClient.get(`/reservations/${stay.reservation.id}`), 200);
    assert.deepEqual(read, session, "the same representation as the session API's");

    const unknown = await expectProblem("GET", ONE, await external("GET", `/reservations/${UNKNOWN_ID}`, key.secret), 404, "not-found");
    for (const [label, id] of [["another property's", hillside.reservation.id], ["another tenant's", theirs.reservation.id],
      ["a malformed id", MALFORMED_ID]]) {
      const problem = await expectProblem("GET", ONE, await external("GET", `/reservations/${id}`, key.secret), 404, "not-found");
      assert.deepEqual(problem, unknown, `${label} answers as an unknown id`);
    }
  }));
