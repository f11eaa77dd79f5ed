// The reservation lifecycle end to end through the gateway: the actions
// POST /v1/reservations/{id}/confirm, /check-in, /check-out, /cancel and /no-show,
// table-driven over every starting status (supabase/migrations/20261122000500_reservations.sql
// decides which step is allowed), their timestamps, the cleaning task a check-out
// leaves behind, and the nights a stay frees when it ends. Every response is checked
// against the served OpenAPI document.
import assert from "node:assert/strict";
import {
  type Client,
  client,
  expectInvalid,
  expectMinimal,
  expectProblem,
  expectStatus,
  MALFORMED_ID,
  type Page,
  representation,
  UNKNOWN_ID,
  withFixture,
} from "../support/api.ts";
import {
  addDays,
  createGuest,
  createProperty,
  createRatePlan,
  createReservation,
  createStay,
  createUnit,
  type Place,
  readReservation as read,
  type Reservation,
  type ReservationAction as Action,
  reservationIn,
  type ReservationStatus,
  stepReservation as actOk,
} from "../support/domain.ts";

const RESERVATIONS = "/v1/reservations";
const RESERVATION = "/v1/reservations/{id}";
const TASKS = "/v1/tasks";

type Stamp = "confirmedAt" | "checkedInAt" | "checkedOutAt" | "cancelledAt" | "noShowAt";

const ACTIONS: Action[] = ["confirm", "check-in", "check-out", "cancel", "no-show"];
const STATUSES: ReservationStatus[] = ["pending", "confirmed", "checked_in", "checked_out", "cancelled", "no_show"];

const target: Record<Action, ReservationStatus> = {
  "confirm": "confirmed",
  "check-in": "checked_in",
  "check-out": "checked_out",
  "cancel": "cancelled",
  "no-show": "no_show",
};
const stampOf: Record<Action, Stamp> = {
  "confirm": "confirmedAt",
  "check-in": "checkedInAt",
  "check-out": "checkedOutAt",
  "cancel": "cancelledAt",
  "no-show": "noShowAt",
};

// The transition matrix: from each status, the actions the lifecycle allows. Every
// other action (including the one that names the current status again) is a 409.
const allowed: Record<ReservationStatus, Action[]> = {
  pending: ["confirm", "cancel"],
  confirmed: ["check-in", "cancel", "no-show"],
  checked_in: ["check-out"],
  checked_out: [],
  cancelled: [],
  no_show: [],
};

function actionTemplate(action: Action): string {
  return `/v1/reservations/{id}/${action}`;
}

// /cancel takes a JSON body ({reason?}); the other actions take none.
function act(api: Client, id: string, action: Action, headers?: Record<string, string>, reason?: string) {
  const body = action === "cancel" ? (reason === undefined ? {} : { reason }) : undefined;
  return api.post(`/reservations/${id}/${action}`, body, headers);
}

// A property with a unit, a rate plan and a guest to book.
async function place(api: Client): Promise<Place> {
  const property = await createProperty(api);
  const unit = await createUnit(api, property.id);
  const ratePlan = await createRatePlan(api, property.id);
  const guest = await createGuest(api);
  return { propertyId: property.id, unitId: unit.id, guestId: guest.id, ratePlanId: ratePlan.id };
}

// ---------------------------------------------------------------- the transition matrix

for (const from of STATUSES) {
  const steps = ACTIONS.map((action) => allowed[from].includes(action) ? `${action} → ${target[action]}` : `${action} → 409`);
  Deno.test(`lifecycle matrix from ${from}: ${steps.join(", ")}`, (t) =>
    withFixture(async ({ tenant }) => {
      const ctx = await tenant(`life-${from}`);
      const api = ctx.ownerClient;
      const at = await place(api);
      // Each reservation takes its own three nights on the unit, so none blocks another.
      let slot = 0;
      const fresh = () => reservationIn(api, at, from, addDays("2027-04-01", 4 * slot++));

      for (const action of ACTIONS) {
        const template = actionTemplate(action);
        const stamp = stampOf[action];
        if (allowed[from].includes(action)) {
          await t.step(`${action}: 204 with an ETag, or 200 with the reservation; ${stamp} is stamped`, async () => {
            const reason = action === "cancel" ? "Guest changed plans" : undefined;
            const expectChanged = (before: Reservation, after: Reservation) => {
              assert.equal(after.status, target[action]);
              assert.ok(after[stamp], `${stamp} is set`);
              assert.equal(after[stamp], after.updatedAt, `${stamp} is the time of the step`);
              assert.notEqual(after.updatedAt, before.updatedAt);
              assert.ok(Date.parse(after.updatedAt) >= Date.parse(before.updatedAt));
              assert.deepEqual(after, {
                ...before,
                status: target[action],
                [stamp]: after[stamp],
                updatedAt: after.updatedAt,
                ...(reason ? { cancellationReason: reason } : {}),
              }, "only the status, its stamp (and the reason) change");
            };

            const minimal = await fresh();
            const { etag } = await expectMinimal("POST", template, await act(api, minimal.id, action, undefined, reason), 204);
            const afterMinimal = await read(api, minimal.id);
            expectChanged(minimal, afterMinimal.body);
            assert.equal(afterMinimal.etag, etag, "the ETag stands for the new representation");

            const full = await fresh();
            const response = await act(api, full.id, action, representation, reason);
            const body = await expectStatus<Reservation>("POST", template, response, 200);
            assert.equal(response.headers.get("preference-applied"), "return=representation");
            expectChanged(full, body);
            const afterFull = await read(api, full.id);
            assert.deepEqual(afterFull.body, body);
            assert.equal(afterFull.etag, response.headers.get("etag"));
          });
        } else {
          await t.step(`${action}: 409 naming ${from}, and nothing changes`, async () => {
            const reservation = await fresh();
            const before = await read(api, reservation.id);
            const response = await act(api, reservation.id, action, representation, action === "cancel" ? "Too late" : undefined);
            const problem = await expectProblem("POST", template, response, 409, "lifecycle-transition-refused");
            assert.match(problem.detail, new RegExp(`\\b${from}\\b`), `the detail names the current status: ${problem.detail}`);
            assert.equal(problem.currentStatus, from);
            assert.equal(problem.requestedStatus, target[action]);
            // Where it could go instead, unless it is already where it was asked to go.
            if (from !== target[action]) {
              assert.deepEqual([...problem.allowedStatuses ?? []].sort(), allowed[from].map((step) => target[step]).sort());
            }
            const after = await read(api, reservation.id);
            assert.deepEqual(after.body, before.body, "nothing changed");
            assert.equal(after.etag, before.etag);
          });
        }
      }
    }));
}

// ---------------------------------------------------------------- side effects

Deno.test("POST /v1/reservations/{id}/check-out: one open cleaning task for the unit, due at the property's check-in time", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("checkout-task");
    const api = ctx.ownerClient;
    // Tokyo has no daylight saving: 14:00 on the departure day is 05:00 UTC.
    const property = await createProperty(api, { timezone: "Asia/Tokyo", currency: "JPY", checkInTime: "14:00" });
    const unit = await createUnit(api, property.id);
    const otherUnit = await createUnit(api, property.id);
    const guest = await createGuest(api);
    const stay = await createReservation(api, { propertyId: property.id, guestId: guest.id }, {
      unitId: unit.id,
      status: "confirmed",
      checkIn: "2027-03-10",
      checkOut: "2027-03-13",
    });
    const tasksOf = async (unitId: string) =>
      await expectStatus<Page<Record<string, unknown>>>("GET", TASKS, await api.get(`/tasks?unitId=${unitId}`), 200);

    await actOk(api, stay.id, "check-in");
    assert.equal((await tasksOf(unit.id)).pagination.total, 0, "checking in makes no task");

    const out = await actOk(api, stay.id, "check-out");
    const tasks = await tasksOf(unit.id);
    assert.equal(tasks.pagination.total, 1);
    const task = tasks.data[0]!;
    assert.deepEqual({ ...task, id: undefined, createdAt: undefined, updatedAt: undefined }, {
      id: undefined,
      propertyId: property.id,
      unitId: unit.id,
      reservationId: stay.id,
      type: "cleaning",
      title: `Clean ${unit.name} after ${stay.confirmationCode}`,
      description: null,
      assigneeId: null,
      dueAt: task.dueAt,
      priority: "normal",
      status: "open",
      startedAt: null,
      completedAt: null,
      cancelledAt: null,
      createdAt: undefined,
      updatedAt: undefined,
    });
    assert.equal(Date.parse(task.dueAt as string), Date.parse("2027-03-13T05:00:00Z"));
    assert.equal(task.createdAt, out.checkedOutAt, "made by the check-out");
    assert.equal((await tasksOf(otherUnit.id)).pagination.total, 0, "only the stay's unit");

    // A second check-out leaves no second task, and is refused.
    const again = await act(api, stay.id, "check-out");
    const still = await tasksOf(unit.id);
    assert.deepEqual(still.data.map((t) => t.id), [task.id]);
    assert.match((await expectProblem("POST", actionTemplate("check-out"), again, 409, "lifecycle-transition-refused")).detail, /checked_out/);
  }));

Deno.test("POST /v1/reservations/{id}/check-in: 422 without a unit, and nothing changes; with a unit it checks in", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("checkin-unit");
    const api = ctx.ownerClient;
    const property = await createProperty(api);
    const unit = await createUnit(api, property.id);
    const guest = await createGuest(api);
    const stay = await createReservation(api, { propertyId: property.id, guestId: guest.id }, { status: "confirmed" });
    assert.equal(stay.unitId, null);

    const refused = await act(api, stay.id, "check-in");
    const problem = await expectProblem("POST", actionTemplate("check-in"), refused, 422, "unprocessable");
    assert.match(problem.detail, /unit/);
    assert.deepEqual((await read(api, stay.id)).body, stay, "nothing changed");

    await expectMinimal("PATCH", RESERVATION, await api.patch(`/reservations/${stay.id}`, { unitId: unit.id }), 204);
    const inHouse = await actOk(api, stay.id, "check-in");
    assert.equal(inHouse.status, "checked_in");
    assert.equal(inHouse.unitId, unit.id);
  }));

Deno.test("lifecycle: ended stays free their nights on the unit (cancelled, no-show, checked-out); live ones hold them", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("freed");
    const api = ctx.ownerClient;
    const at = await place(api);
    const holds: Record<ReservationStatus, boolean> = {
      pending: true,
      confirmed: true,
      checked_in: true,
      checked_out: false,
      cancelled: false,
      no_show: false,
    };
    let slot = 0;
    for (const status of STATUSES) {
      const checkIn = addDays("2027-06-01", 4 * slot++);
      const first = await reservationIn(api, at, status, checkIn);
      const again = await api.post("/reservations", {
        propertyId: at.propertyId,
        unitId: at.unitId,
        guestId: at.guestId,
        checkIn: first.checkIn,
        checkOut: first.checkOut,
      });
      if (holds[status]) {
        const problem = await expectProblem("POST", RESERVATIONS, again, 409, "unit-already-booked");
        assert.match(problem.detail, /already booked/, `${status}: ${problem.detail}`);
      } else {
        await expectMinimal("POST", RESERVATIONS, again, 201);
      }
      const onUnit = await expectStatus<Page<Reservation>>(
        "GET", RESERVATIONS, await api.get(`/reservations?unitId=${at.unitId}&from=${first.checkIn}&to=${first.checkOut}`), 200,
      );
      assert.equal(onUnit.pagination.total, holds[status] ? 1 : 2, `${status}: the nights ${holds[status] ? "stay taken" : "are free"}`);
    }
  }));

// ---------------------------------------------------------------- /cancel's body

Deno.test("POST /v1/reservations/{id}/cancel: the reason is trimmed and optional; a bad body is 400 and nothing changes", () =>
  withFixture(async ({ tenant }) => {
    const ctx = await tenant("cancel-body");
    const api = ctx.ownerClient;
    const at = await place(api);
    const template = actionTemplate("cancel");

    const withReason = await reservationIn(api, at, "confirmed", "2027-07-01");
    const cancelled = await expectStatus<Reservation>(
      "POST", template, await api.post(`/reservations/${withReason.id}/cancel`, { reason: "  Flight cancelled  " }, representation), 200,
    );
    assert.equal(cancelled.cancellationReason, "Flight cancelled");
    assert.equal(cancelled.cancelledAt, cancelled.updatedAt);

    const withoutReason = await reservationIn(api, at, "pending", "2027-07-10");
    const plain = await expectStatus<Reservation>(
      "POST", template, await api.post(`/reservations/${withoutReason.id}/cancel`, {}, representation), 200,
    );
    assert.deepEqual([plain.status, plain.cancellationReason], ["cancelled", null]);
    assert.ok(plain.cancelledAt);

    const kept = await reservationIn(api, at, "pending", "2027-07-20");
    const bad: [unknown, string][] = [
      [{ reason: "   " }, "reason"],
      [{ reason: "x".repeat(1001) }, "reason"],
      [{ reason: 42 }, "reason"],
      [{ reason: "ok", refund: true }, "refund"],
      [[], "(body)"],
    ];
    for (const [body, field] of bad) {
      await expectInvalid("POST", template, await api.post(`/reservations/${kept.id}/cancel`, body), field, JSON.stringify(body));
    }
    // The OpenAPI document marks the body required: {} cancels without a reason.
    await expectInvalid("POST", template, await api.post(`/reservations/${kept.id}/cancel`), "(body)", "no body");
    assert.deepEqual((await read(api, kept.id)).body, kept, "nothing changed");
  }));

// ---------------------------------------------------------------- ids and roles

Deno.test("lifecycle actions: 404 for unknown, malformed and other tenants' ids; the other tenant's stay is unchanged", () =>
  withFixture(async ({ tenant }) => {
    const a = await tenant("act404-a");
    const b = await tenant("act404-b");
    const { reservation } = await createStay(a.ownerClient, { status: "confirmed" });
    for (const action of ACTIONS) {
      for (const id of [UNKNOWN_ID, MALFORMED_ID, reservation.id]) {
        await expectProblem("POST", actionTemplate(action), await act(b.ownerClient, id, action), 404, "not-found");
      }
    }
    assert.deepEqual((await read(a.ownerClient, reservation.id)).body, reservation);
  }));

Deno.test("lifecycle actions: owner, admin and staff each run every action", () =>
  withFixture(async ({ tenant, memberOf }) => {
    const ctx = await tenant("act-roles");
    const admin = await memberOf(ctx, "admin");
    const staff = await memberOf(ctx, "staff");
    const at = await place(ctx.ownerClient);
    let slot = 0;
    for (const member of [ctx.owner, admin, staff]) {
      const api = client(member, ctx.tenantId);
      const next = () => addDays("2027-08-01", 4 * slot++);
      const stay = await reservationIn(api, at, "pending", next());
      assert.equal((await actOk(api, stay.id, "confirm")).status, "confirmed");
      assert.equal((await actOk(api, stay.id, "check-in")).status, "checked_in");
      assert.equal((await actOk(api, stay.id, "check-out")).status, "checked_out");
      const cancelled = await reservationIn(api, at, "pending", next());
      assert.equal((await actOk(api, cancelled.id, "cancel")).status, "cancelled");
      const missed = await reservationIn(api, at, "confirmed", next());
      assert.equal((await actOk(api, missed.id, "no-show")).status, "no_show");
    }
  }));
