import type { Endpoint } from "../http/endpoint.ts";
import { listResponse, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { cancelPaymentLink, findPayment, findPaymentLink, listPaymentLinks, listPayments } from "./queries.ts";
import { listPaymentLinksQuery, listPaymentsQuery, payment, paymentLink } from "./schema.ts";

const tag = "Payments";

// Payments are recorded against a reservation (POST /v1/reservations/{id}/payments) and
// never edited; links are created there too and end paid, expired or cancelled.
export function paymentEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/payments", operationId: "listPayments", tag, access: "member",
      summary: "List payments, newest first; filter by reservation and source.", query: listPaymentsQuery,
      success: [{ status: 200, description: "A page of payments.", schema: listOf(payment) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listPayments(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/payments/{id}", operationId: "getPayment", tag, access: "member",
      summary: "Read a payment.", params: idParams,
      success: [{ status: 200, description: "The payment.", schema: payment, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findPayment(db, params.id);
      if (!found) throw notFound("payment");
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/payment-links", operationId: "listPaymentLinks", tag, access: "member",
      summary: "List payment links, newest first; filter by reservation and status.", query: listPaymentLinksQuery,
      success: [{ status: 200, description: "A page of payment links.", schema: listOf(paymentLink) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listPaymentLinks(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/payment-links/{id}", operationId: "getPaymentLink", tag, access: "member",
      summary: "Read a payment link.", params: idParams,
      success: [{ status: 200, description: "The payment link.", schema: paymentLink, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findPaymentLink(db, params.id);
      if (!found) throw notFound("payment link");
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/payment-links/{id}/cancel", operationId: "cancelPaymentLink", tag, access: "member",
      summary: "Cancel an active payment link; a paid, expired or cancelled one is a 409.", params: idParams,
      prefer: true, errors: [409],
      success: [
        { status: 204, description: "Cancelled.", headers: ["ETag"] },
        { status: 200, description: "Cancelled (Prefer: return=representation).", schema: paymentLink, headers: ["ETag"] },
      ],
    }, async ({ db, params, request }) => {
      const cancelled = await cancelPaymentLink(db, params.id);
      if (!cancelled) throw notFound("payment link");
      return await written(request, cancelled);
    }),
  ];
}
