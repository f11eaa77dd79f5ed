import type { z } from "zod";
import type { Endpoint } from "../http/endpoint.ts";
import { HttpError } from "../http/problem.ts";
import { createdResponses } from "../http/resource-endpoints.ts";
import { listResponse, locationOf, pageFor, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { findPayment, findPaymentByReference, insertPayment } from "../payments/queries.ts";
import { payment } from "../payments/schema.ts";
import { findReservation, listReservations } from "../reservations/queries.ts";
import { reservation } from "../reservations/schema.ts";
import { integrationEndpoint } from "./endpoints.ts";
import { REPLAYED_HEADER } from "./idempotency.ts";
import type { IntegrationScope } from "./integration-scope.ts";
import { externalPaymentBody, listExternalReservationsQuery } from "./schema.ts";

const tag = "External";

type Payment = NonNullable<Awaited<ReturnType<typeof findPaymentByReference>>>;

// 201 with Location, and an empty body by default, as docs/contract.md promises for this
// route; the payment itself when asked for. A retry answers as the first request did.
function recorded(request: Request, row: Payment, replayed: boolean): Response {
  const response = written(request, row, { created: { location: locationOf(request, `external/payments/${row.id}`), emptyByDefault: true } });
  if (replayed) response.headers.set(REPLAYED_HEADER, "true");
  return response;
}

// What differs between a recorded payment and a retry that names the same reference.
function mismatch(first: Payment, reservationId: string, body: z.output<typeof externalPaymentBody>): string[] {
  const differs: string[] = [];
  if (first.reservationId !== reservationId) differs.push("reservation");
  if (first.amount !== body.amount) differs.push("amount");
  if (first.currency !== body.currency) differs.push("currency");
  if (first.method !== body.method) differs.push("method");
  return differs;
}

// The routes a channel manager or payment system needs for its properties.
export function externalEndpoints(scope: IntegrationScope): Endpoint[] {
  return [
    integrationEndpoint(scope, {
      method: "GET", path: "/v1/external/reservations", operationId: "listExternalReservations", tag,
      summary: "The key's properties' reservations by check-in, or by last change with updatedSince.",
      query: listExternalReservationsQuery, countable: true, requires: "reservations:read",
      success: [{ status: 200, description: "A page of reservations.", schema: listOf(reservation) }],
    }, async ({ db, query, request, tenantId, properties }) => {
      // The one property the list reads, where it is known, for a planned count's estimate.
      const propertyId = query.propertyId ?? (properties !== "all" && properties.length === 1 ? properties[0] : undefined);
      const page = pageFor(request, query, { reader: "integration", tenantId, ...(propertyId ? { propertyId } : {}) });
      return listResponse(page, await listReservations(db, query, page));
    }),

    integrationEndpoint(scope, {
      method: "GET", path: "/v1/external/reservations/{id}", operationId: "getExternalReservation", tag,
      summary: "Read one of the key's properties' reservations, with its balance.", params: idParams, resource: "reservation",
      requires: "reservations:read",
      success: [{ status: 200, description: "The reservation.", schema: reservation, headers: ["ETag"] }],
    }, async ({ db, params, missing }) => {
      const found = await findReservation(db, params.id);
      if (!found) throw missing();
      return representation(found);
    }),

    integrationEndpoint(scope, {
      method: "GET", path: "/v1/external/payments/{id}", operationId: "getExternalPayment", tag,
      summary: "Read a payment on one of the key's properties' reservations: the one a recorded payment's Location names.",
      params: idParams, resource: "payment", requires: "payments:write",
      success: [{ status: 200, description: "The payment.", schema: payment, headers: ["ETag"] }],
    }, async ({ db, params, missing }) => {
      const found = await findPayment(db, params.id);
      if (!found) throw missing();
      return representation(found);
    }),

    integrationEndpoint(scope, {
      method: "POST", path: "/v1/external/reservations/{id}/payments", operationId: "recordExternalPayment", tag,
      summary: "Record a payment on a reservation of the key's properties; its balance follows. " +
        "The same externalReference again returns the first payment and records nothing.",
      params: idParams, resource: "reservation", body: externalPaymentBody, prefer: true, requires: "payments:write", problems: ["external-reference-reused", "lifecycle-transition-refused", "unprocessable"],
      success: createdResponses(payment, "Recorded (or recorded before, with Idempotent-Replayed: true).", { emptyByDefault: true }),
      resourceAt: { path: "/v1/external/payments/{id}" },
    }, async ({ db, params, body, request, missing }) => {
      const row = await insertPayment(db, params.id, body, "external", { strict: true });
      if (row) return recorded(request, row, false);

      // Nothing inserted: an unseen reservation, another currency, or a reference already recorded.
      const stay = await findReservation(db, params.id);
      if (!stay) throw missing();
      if (stay.currency !== body.currency) {
        throw new HttpError("unprocessable", `The reservation is in ${stay.currency}; send the payment in it.`, {
          errors: [{ path: "currency", message: `Must be ${stay.currency}.` }],
        });
      }
      const first = await findPaymentByReference(db, body.externalReference);
      if (!first) {
        throw new HttpError("external-reference-reused", "This externalReference is already recorded for a reservation of another property.");
      }
      const differs = mismatch(first, params.id, body);
      if (differs.length > 0) {
        throw new HttpError("external-reference-reused", `This externalReference is already recorded with a different ${differs.join(", ")}.`);
      }
      return recorded(request, first, true);
    }),
  ];
}
