import type { Transaction } from "kysely";
import type { DB } from "../db/database.ts";
import type { Endpoint } from "../http/endpoint.ts";
import { HttpError } from "../http/problem.ts";
import { changedResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { written } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import type { RequestScope } from "../http/request-scope.ts";
import {
  deleteReservation,
  findReservation,
  insertReservation,
  listReservations,
  lockReservation,
  moveReservation,
  type ReservationStatus,
  updateReservation,
} from "./queries.ts";
import {
  cancelReservationBody,
  createReservationBody,
  listReservationsQuery,
  reservation,
  updateReservationBody,
} from "./schema.ts";

const tag = "Reservations";

// Each action is one status step; the reservation trigger decides whether it is allowed.
const actions: { path: string; operationId: string; status: ReservationStatus; summary: string }[] = [
  { path: "confirm", operationId: "confirmReservation", status: "confirmed", summary: "Confirm a pending reservation." },
  { path: "check-in", operationId: "checkInReservation", status: "checked_in", summary: "Check in a confirmed reservation; it needs a unit." },
  { path: "check-out", operationId: "checkOutReservation", status: "checked_out", summary: "Check out; a cleaning task is created for the unit." },
  { path: "no-show", operationId: "markNoShow", status: "no_show", summary: "Mark a confirmed reservation as a no-show; its nights are freed." },
];

// An action that moved nothing: the reservation is not there, or it already has
// that status, which is a refusal like any step the lifecycle does not allow.
async function alreadyThere(db: Transaction<DB>, id: string, status: ReservationStatus, missing: () => HttpError) {
  const current = await findReservation(db, id);
  if (!current) return missing();
  return new HttpError("lifecycle-transition-refused", `The reservation is already ${status}.`, {
    members: { currentStatus: current.status, requestedStatus: status },
  });
}

export function reservationEndpoints(scope: RequestScope): Endpoint[] {
  const reservations = resourceEndpoints(scope, {
    tag, collection: "reservations", schema: reservation,
    name: { one: "Reservation", many: "Reservations" }, noun: { one: "reservation", many: "reservations" },
  });
  const done = changedResponses(reservation, "Done.");
  return [
    reservations.list({
      access: "member", query: listReservationsQuery,
      summary: "List reservations by arrival date; filter by status, property, room type, unit, guest and dates.",
    }, listReservations),
    reservations.create({
      access: "member",
      summary: "Create a reservation for a room type, with or without a unit. A type with no room left on one of its nights, " +
        "or nights already taken on the unit, are a 409.",
      body: createReservationBody,
      problems: [
        "no-availability", "unit-already-booked", "unit-out-of-order", "rate-restricted", "over-occupancy", "already-exists",
        "unknown-reference", "unprocessable",
      ],
    }, insertReservation),
    reservations.get({ access: "member", summary: "Read a reservation, with what is paid and what is owed." },
      findReservation),
    reservations.update({
      access: "member", summary: "Change a reservation's stay, unit, guest, price or notes. Status moves through the actions.",
      body: updateReservationBody,
      problems: [
        "no-availability", "unit-already-booked", "unit-out-of-order", "rate-restricted", "over-occupancy", "already-exists",
        "lifecycle-transition-refused",
        "unknown-reference", "unprocessable",
      ],
    }, { lock: lockReservation, update: updateReservation }),
    reservations.remove({
      access: "manager", summary: "Delete a reservation that has no payments (a mistake). Otherwise cancel it.",
      problems: ["still-referenced"],
    }, deleteReservation),

    ...actions.map((action) =>
      tenantEndpoint(scope, {
        method: "POST", path: `/v1/reservations/{id}/${action.path}`, operationId: action.operationId, tag,
        access: "member", summary: `${action.summary} 409 names the current status when the lifecycle does not allow it.`,
        params: idParams, resource: "reservation", prefer: true, problems: ["lifecycle-transition-refused", "unprocessable"], success: done,
      }, async ({ db, params, request, missing }) => {
        const moved = await moveReservation(db, params.id, action.status);
        if (!moved) throw await alreadyThere(db, params.id, action.status, missing);
        return written(request, moved);
      })
    ),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/cancel", operationId: "cancelReservation", tag, access: "member",
      summary: "Cancel a pending or confirmed reservation, with an optional reason; its nights are freed.",
      params: idParams, resource: "reservation", body: cancelReservationBody, prefer: true, problems: ["lifecycle-transition-refused"], success: done,
    }, async ({ db, params, body, request, missing }) => {
      const moved = await moveReservation(db, params.id, "cancelled", body.reason ? { cancellation_reason: body.reason } : {});
      if (!moved) throw await alreadyThere(db, params.id, "cancelled", missing);
      return written(request, moved);
    }),
  ];
}
