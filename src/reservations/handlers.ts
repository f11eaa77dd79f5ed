import type { z } from "zod";
import { accessCode, accessCodeParams, createAccessCodeBody, listAccessCodesQuery } from "../access-codes/schema.ts";
import { findAccessCode, insertAccessCode, listAccessCodes, revokeAccessCode } from "../access-codes/queries.ts";
import type { Endpoint, SuccessDoc } from "../http/endpoint.ts";
import { HttpError } from "../http/problem.ts";
import { conditionalUpdate, deleted, listResponse, locationOf, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { insertPayment, insertPaymentLink } from "../payments/queries.ts";
import { createPaymentLinkBody, payment, paymentLink, recordPaymentBody } from "../payments/schema.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import {
  deleteReservation,
  findReservation,
  insertReservation,
  listReservations,
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
const missing = () => notFound("reservation");

function changed(schema: z.ZodType): SuccessDoc[] {
  return [
    { status: 204, description: "Done.", headers: ["ETag"] },
    { status: 200, description: "Done (Prefer: return=representation).", schema, headers: ["ETag"] },
  ];
}

function created(schema: z.ZodType): SuccessDoc[] {
  return [{ status: 201, description: "Created; the body only with Prefer: return=representation.", schema, headers: ["Location", "ETag"] }];
}

// Each action is one status step; the reservation trigger decides whether it is allowed.
const actions: { path: string; operationId: string; status: ReservationStatus; summary: string }[] = [
  { path: "confirm", operationId: "confirmReservation", status: "confirmed", summary: "Confirm a pending reservation." },
  { path: "check-in", operationId: "checkInReservation", status: "checked_in", summary: "Check in a confirmed reservation; it needs a unit." },
  { path: "check-out", operationId: "checkOutReservation", status: "checked_out", summary: "Check out; a cleaning task is created for the unit." },
  { path: "no-show", operationId: "markNoShow", status: "no_show", summary: "Mark a confirmed reservation as a no-show; its nights are freed." },
];

export function reservationEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/reservations", operationId: "listReservations", tag, access: "member",
      summary: "List reservations by arrival date; filter by status, property, unit, guest and dates.",
      query: listReservationsQuery,
      success: [{ status: 200, description: "A page of reservations.", schema: listOf(reservation) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listReservations(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations", operationId: "createReservation", tag, access: "member",
      summary: "Create a reservation. Nights already taken on the unit are a 409.",
      body: createReservationBody, prefer: true, errors: [409, 422], success: created(reservation),
    }, async ({ db, body, request }) => {
      const row = await insertReservation(db, body);
      return await written(request, row, { created: { location: locationOf(request, `reservations/${row.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/reservations/{id}", operationId: "getReservation", tag, access: "member",
      summary: "Read a reservation, with what is paid and what is owed.", params: idParams,
      success: [{ status: 200, description: "The reservation.", schema: reservation, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findReservation(db, params.id);
      if (!found) throw missing();
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/reservations/{id}", operationId: "updateReservation", tag, access: "member",
      summary: "Change a reservation's stay, unit, guest, price or notes. Status moves through the actions.",
      params: idParams, body: updateReservationBody, prefer: true, conditional: true, errors: [409, 422],
      success: changed(reservation),
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findReservation(db, params.id, { lock: true }),
        update: () => updateReservation(db, params.id, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/reservations/{id}", operationId: "deleteReservation", tag, access: "manager",
      summary: "Delete a reservation that has no payments (a mistake). Otherwise cancel it.",
      params: idParams, errors: [409], success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, params }) => {
      const result = await deleteReservation(db, params.id);
      if (result.numDeletedRows === 0n) throw missing();
      return deleted();
    }),

    ...actions.map((action) =>
      tenantEndpoint(scope, {
        method: "POST", path: `/v1/reservations/{id}/${action.path}`, operationId: action.operationId, tag,
        access: "member", summary: `${action.summary} 409 names the current status when the lifecycle does not allow it.`,
        params: idParams, prefer: true, errors: [409, 422], success: changed(reservation),
      }, async ({ db, params, request }) => {
        const moved = await moveReservation(db, params.id, action.status);
        if (!moved) throw missing();
        return await written(request, moved);
      })
    ),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/cancel", operationId: "cancelReservation", tag, access: "member",
      summary: "Cancel a pending or confirmed reservation, with an optional reason; its nights are freed.",
      params: idParams, body: cancelReservationBody, prefer: true, errors: [409], success: changed(reservation),
    }, async ({ db, params, body, request }) => {
      const moved = await moveReservation(db, params.id, "cancelled", body.reason ? { cancellation_reason: body.reason } : {});
      if (!moved) throw missing();
      return await written(request, moved);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/payments", operationId: "recordPayment", tag: "Payments",
      access: "member", summary: "Record a payment received for a reservation; its balance follows.",
      params: idParams, body: recordPaymentBody, prefer: true, errors: [409, 422], success: created(payment),
    }, async ({ db, params, body, request }) => {
      if (!await findReservation(db, params.id)) throw missing();
      const row = await insertPayment(db, params.id, body, "manual");
      return await written(request, row, { created: { location: locationOf(request, `payments/${row.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/payment-link", operationId: "createPaymentLink", tag: "Payments",
      access: "member", summary: "Create a payment link for a reservation (contract route); it asks for the balance by default.",
      params: idParams, body: createPaymentLinkBody, prefer: true, errors: [409, 422], success: created(paymentLink),
    }, async ({ db, params, body, request }) => {
      const stay = await findReservation(db, params.id);
      if (!stay) throw missing();
      const amount = body.amount ?? stay.balance ?? 0;
      if (amount <= 0) throw new HttpError("conflict", "The reservation owes nothing; give an amount to ask for.");
      const link = await insertPaymentLink(db, params.id, amount, body);
      return await written(request, link, { created: { location: locationOf(request, `payment-links/${link.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/reservations/{id}/access-codes", operationId: "listAccessCodes", tag: "Access codes",
      access: "member", summary: "A reservation's door codes, oldest first.", params: idParams, query: listAccessCodesQuery,
      success: [{ status: 200, description: "A page of access codes.", schema: listOf(accessCode) }],
    }, async ({ db, params, query }) => {
      if (!await findReservation(db, params.id)) throw missing();
      const { data, pagination } = await listAccessCodes(db, params.id, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/access-codes", operationId: "createAccessCode", tag: "Access codes",
      access: "member", params: idParams, body: createAccessCodeBody, prefer: true, errors: [409, 422],
      summary: "Issue a door code for the stay; by default six random digits valid from check-in to check-out.",
      success: created(accessCode),
    }, async ({ db, params, body, request }) => {
      if (!await findReservation(db, params.id)) throw missing();
      const row = await insertAccessCode(db, params.id, body);
      return await written(request, row, {
        created: { location: locationOf(request, `reservations/${params.id}/access-codes/${row.id}`) },
      });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/reservations/{id}/access-codes/{codeId}", operationId: "getAccessCode",
      tag: "Access codes", access: "member", summary: "Read one door code.", params: accessCodeParams,
      success: [{ status: 200, description: "The access code.", schema: accessCode, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findAccessCode(db, params.id, params.codeId);
      if (!found) throw notFound("access code");
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/access-codes/{codeId}/revoke", operationId: "revokeAccessCode",
      tag: "Access codes", access: "member", summary: "Revoke a door code at once.", params: accessCodeParams,
      prefer: true, errors: [409], success: changed(accessCode),
    }, async ({ db, params, request }) => {
      const revoked = await revokeAccessCode(db, params.id, params.codeId);
      if (!revoked) throw notFound("access code");
      return await written(request, revoked);
    }),
  ];
}
