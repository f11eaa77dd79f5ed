import type { z } from "zod";
import type { Endpoint } from "../http/endpoint.ts";
import { json } from "../http/json.ts";
import { HttpError } from "../http/problem.ts";
import { changedResponses, createdResponses } from "../http/resource-endpoints.ts";
import { listResponse, locationOf, pageFor, representation, written } from "../http/respond.ts";
import { daysBetween, idParams, listOf } from "../http/schemas.ts";
import { findPayment, findPaymentByReference, insertPayment } from "../payments/queries.ts";
import { payment } from "../payments/schema.ts";
import { findReservation, listReservations } from "../reservations/queries.ts";
import { reservation } from "../reservations/schema.ts";
import { nightByNight } from "./ari.ts";
import { integrationEndpoint } from "./endpoints.ts";
import { REPLAYED_HEADER } from "./idempotency.ts";
import type { IntegrationScope } from "./integration-scope.ts";
import {
  cancelChannelBooking,
  channelGuestId,
  findChannelBooking,
  insertChannelBooking,
  lockChannelBooking,
  decodeCursor,
  readChanges,
  readChannelAri,
  updateChannelBooking,
} from "./queries.ts";
import {
  ari,
  ariQuery,
  changesPage,
  changesQuery,
  CHANGES_RETENTION_DAYS,
  channelBookingBody,
  channelBookingChange,
  channelCancellation,
  externalPaymentBody,
  listExternalReservationsQuery,
} from "./schema.ts";

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

type Reservation = NonNullable<Awaited<ReturnType<typeof findReservation>>>;

// 201 with Location, as any creation; a channel's retry answers as its first booking did.
function booked(request: Request, row: Reservation, replayed: boolean): Response {
  const response = written(request, row, { created: { location: locationOf(request, `external/reservations/${row.id}`) } });
  if (replayed) response.headers.set(REPLAYED_HEADER, "true");
  return response;
}

// What differs between a channel's first booking under a reference and a booking sent
// again with it. The guest is not compared: the first booking found or made them.
function bookingMismatch(first: Reservation, propertyId: string, body: z.output<typeof channelBookingBody>): string[] {
  const differs: string[] = [];
  if (first.propertyId !== propertyId) differs.push("property");
  if (first.roomTypeId !== body.roomTypeId) differs.push("roomTypeId");
  if (first.ratePlanId !== body.ratePlanId) differs.push("ratePlanId");
  if (first.checkIn !== body.checkIn) differs.push("checkIn");
  if (first.checkOut !== body.checkOut) differs.push("checkOut");
  if (first.adults !== body.adults) differs.push("adults");
  if (first.children !== body.children) differs.push("children");
  if (body.totalAmount === undefined ? first.priceOverridden : first.totalAmount !== body.totalAmount) differs.push("totalAmount");
  if (body.currency !== undefined && first.currency !== body.currency) differs.push("currency");
  return differs;
}

function notAChannelBooking(): HttpError {
  return new HttpError("not-a-channel-booking", "This reservation was not booked through a channel: the property's staff change it.");
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
      method: "POST", path: "/v1/external/properties/{id}/reservations", operationId: "createChannelBooking", tag,
      summary: "Book a stay that a channel sold, for a room type and a rate plan of the key's property, at the channel's " +
        "price or the calendar's; the guest is found or added. The same externalReference again returns the first " +
        "reservation and books nothing. A room type with no room left on one of the nights is a 409 no-availability, " +
        "and nothing is stored.",
      params: idParams, resource: "property", body: channelBookingBody, prefer: true, requires: "reservations:write",
      problems: ["no-availability", "rate-restricted", "over-occupancy", "external-reference-reused", "already-exists", "unknown-reference", "unprocessable"],
      success: createdResponses(reservation, "Booked (or booked before, with Idempotent-Replayed: true)."),
      resourceAt: { path: "/v1/external/reservations/{id}" },
    }, async ({ db, params, body, request, missing }) => {
      if (!await lockChannelBooking(db, params.id, body)) throw missing();
      const first = await findChannelBooking(db, body);
      if (first) {
        const differs = bookingMismatch(first, params.id, body);
        if (differs.length > 0) {
          throw new HttpError("external-reference-reused",
            `This externalReference is already booked with a different ${differs.join(", ")}: change it with PATCH /v1/external/reservations/${first.id}.`);
        }
        return booked(request, first, true);
      }
      return booked(request, await insertChannelBooking(db, params.id, body), false);
    }),

    integrationEndpoint(scope, {
      method: "PATCH", path: "/v1/external/reservations/{id}", operationId: "changeChannelBooking", tag,
      summary: "Change a stay a channel booked: its dates, room type, rate plan, party, guest or price. It is priced again " +
        "from the calendar unless the channel gave its own price.",
      params: idParams, resource: "reservation", body: channelBookingChange, prefer: true, requires: "reservations:write",
      problems: ["no-availability", "rate-restricted", "over-occupancy", "not-a-channel-booking", "lifecycle-transition-refused", "unknown-reference", "unprocessable"],
      success: changedResponses(reservation, "Changed."),
    }, async ({ db, params, body, request, missing }) => {
      const { guest, ...stay } = body;
      const guestId = guest ? await channelGuestId(db, guest) : undefined;
      const row = await updateChannelBooking(db, params.id, { ...stay, ...(guestId ? { guestId } : {}) });
      if (row) return written(request, row);
      if (!await findReservation(db, params.id)) throw missing();
      throw notAChannelBooking();
    }),

    integrationEndpoint(scope, {
      method: "POST", path: "/v1/external/reservations/{id}/cancel", operationId: "cancelChannelBooking", tag,
      summary: "Cancel a stay a channel booked; its nights are freed. Cancelling it again changes nothing and answers alike.",
      params: idParams, resource: "reservation", body: channelCancellation, prefer: true, requires: "reservations:write",
      problems: ["not-a-channel-booking", "lifecycle-transition-refused"],
      success: changedResponses(reservation, "Cancelled."),
    }, async ({ db, params, body, request, missing }) => {
      const row = await cancelChannelBooking(db, params.id, body.reason);
      if (row) return written(request, row);
      const stay = await findReservation(db, params.id);
      if (!stay) throw missing();
      if (stay.channel === null) throw notAChannelBooking();
      return written(request, stay);
    }),

    integrationEndpoint(scope, {
      method: "GET", path: "/v1/external/properties/{id}/ari", operationId: "getChannelAri", tag,
      summary: "What a channel mirrors of the key's property from one day to another (both included): per room type the " +
        "rooms left each night, per rate plan its prices and restrictions, each as one value a day.",
      params: idParams, resource: "property", query: ariQuery, requires: "ari:read", problems: ["unprocessable"],
      success: [{ status: 200, description: "The property's availability, rates and restrictions.", schema: ari }],
    }, async ({ db, params, query, missing }) => {
      const held = await readChannelAri(db, params.id, query.from, query.to);
      if (held === undefined) throw missing();
      return json(200, nightByNight(held, daysBetween(query.from, query.to) + 1));
    }),

    integrationEndpoint(scope, {
      method: "GET", path: "/v1/external/changes", operationId: "listChannelChanges", tag,
      summary: "What changed on the key's properties after a cursor, in order: a room type's availability or a rate plan's " +
        "prices and restrictions over a range of days (and with reservations:read, a reservation), each one transaction's " +
        `changes to one of them. Kept ${CHANGES_RETENTION_DAYS} days; an older cursor is a 410.`,
      query: changesQuery, requires: "ari:read", problems: ["cursor-expired", "unprocessable"],
      success: [{ status: 200, description: "A page of changes, and the cursor to read on from.", schema: changesPage }],
    }, async ({ db, query }) => {
      const since = query.since === undefined ? undefined : decodeCursor(query.since);
      if (query.since !== undefined && !since) {
        throw new HttpError("unprocessable", "since is not a cursor a page of changes gave.", {
          errors: [{ path: "since", message: "A cursor a page of changes gave as nextCursor." }],
        });
      }
      if (since && since.at < Date.now() / 1000 - CHANGES_RETENTION_DAYS * 86400) {
        throw new HttpError("cursor-expired",
          `Changes are kept ${CHANGES_RETENTION_DAYS} days and this cursor is older: read availability, rates and ` +
            "reservations in full, then read changes without since.");
      }
      return json(200, await readChanges(db, since, query.propertyId, query.limit));
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
