import type { Endpoint } from "../http/endpoint.ts";
import { HttpError } from "../http/problem.ts";
import { changedResponses, createdResponses, resourceEndpoints } from "../http/resource-endpoints.ts";
import { locationOf, written } from "../http/respond.ts";
import { idParams } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import { findReservation } from "../reservations/queries.ts";
import type { RequestScope } from "../http/request-scope.ts";
import {
  cancelPaymentLink,
  findPayment,
  findPaymentLink,
  insertPayment,
  insertPaymentLink,
  listPaymentLinks,
  listPayments,
} from "./queries.ts";
import { createPaymentLinkBody, listPaymentLinksQuery, listPaymentsQuery, payment, paymentLink, recordPaymentBody } from "./schema.ts";

const tag = "Payments";

// Payments are recorded against a reservation and never edited; links are created
// there too and end paid, expired or cancelled.
export function paymentEndpoints(scope: RequestScope): Endpoint[] {
  const payments = resourceEndpoints(scope, {
    tag, collection: "payments", schema: payment,
    name: { one: "Payment", many: "Payments" }, noun: { one: "payment", many: "payments" },
  });
  const links = resourceEndpoints(scope, {
    tag, collection: "payment-links", schema: paymentLink,
    name: { one: "PaymentLink", many: "PaymentLinks" }, noun: { one: "payment link", many: "payment links" },
  });
  return [
    payments.list({
      access: "member", summary: "List payments, newest first; filter by reservation and source.", query: listPaymentsQuery,
    }, listPayments),
    payments.get({ access: "member", summary: "Read a payment." }, findPayment),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/payments", operationId: "recordPayment", tag,
      access: "member", summary: "Record a payment received for a reservation; its balance follows.",
      params: idParams, resource: "reservation", body: recordPaymentBody, prefer: true, problems: ["lifecycle-transition-refused", "already-exists", "unknown-reference", "unprocessable"],
      success: createdResponses(payment), resourceAt: { path: "/v1/payments/{id}" },
    }, async ({ db, params, body, request, missing }) => {
      const row = await insertPayment(db, params.id, body, "manual");
      if (!row) throw missing();
      return written(request, row, { created: { location: locationOf(request, `payments/${row.id}`) } });
    }),

    links.list({
      access: "member", summary: "List payment links, newest first; filter by reservation and status.",
      query: listPaymentLinksQuery,
    }, listPaymentLinks),
    links.get({ access: "member", summary: "Read a payment link." }, findPaymentLink),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/payment-link", operationId: "createPaymentLink", tag,
      access: "member", summary: "Create a payment link for a reservation; it asks for the balance by default.",
      params: idParams, resource: "reservation", body: createPaymentLinkBody, prefer: true, problems: ["nothing-owed", "lifecycle-transition-refused", "unprocessable"],
      // The contract documents this answer's body as empty.
      success: createdResponses(paymentLink, "Created.", { emptyByDefault: true }), resourceAt: { path: "/v1/payment-links/{id}" },
    }, async ({ db, params, body, request, missing }) => {
      const stay = await findReservation(db, params.id);
      if (!stay) throw missing();
      const amount = body.amount ?? stay.balance ?? 0;
      if (amount <= 0) throw new HttpError("nothing-owed", "The reservation owes nothing; give an amount to ask for.");
      const link = await insertPaymentLink(db, params.id, amount, body);
      return written(request, link, { created: { location: locationOf(request, `payment-links/${link.id}`), emptyByDefault: true } });
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/payment-links/{id}/cancel", operationId: "cancelPaymentLink", tag, access: "member",
      summary: "Cancel an active payment link; a paid, expired or cancelled one is a 409.", params: idParams,
      resource: "payment link", prefer: true, problems: ["lifecycle-transition-refused"], success: changedResponses(paymentLink, "Cancelled."),
    }, async ({ db, params, request, missing }) => {
      const cancelled = await cancelPaymentLink(db, params.id);
      if (!cancelled) throw missing();
      return written(request, cancelled);
    }),
  ];
}
