import { pageOnly } from "../db/pagination.ts";
import type { Endpoint } from "../http/endpoint.ts";
import { changedResponses, createdResponses } from "../http/resource-endpoints.ts";
import { listResponse, locationOf, pageFor, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { tenantEndpoint } from "../http/session-endpoints.ts";
import { findReservation } from "../reservations/queries.ts";
import type { RequestScope } from "../http/request-scope.ts";
import { findAccessCode, insertAccessCode, listAccessCodes, revokeAccessCode } from "./queries.ts";
import { accessCode, accessCodeParams, createAccessCodeBody } from "./schema.ts";

const tag = "Access codes";

// Door codes live under their reservation: a code outlives nothing but its stay.
export function accessCodeEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/reservations/{id}/access-codes", operationId: "listAccessCodes", tag,
      access: "member", summary: "A reservation's door codes, oldest first.", params: idParams, resource: "reservation",
      query: pageOnly, countable: true,
      success: [{ status: 200, description: "A page of access codes.", schema: listOf(accessCode) }],
    }, async ({ db, params, query, request, tenantId, missing }) => {
      const page = pageFor(request, query, { reader: "member", tenantId });
      const listed = await listAccessCodes(db, params.id, page);
      // A code is there only under a reservation, so only an empty page asks whether it exists.
      if (listed.data.length === 0 && !await findReservation(db, params.id)) throw missing();
      return listResponse(page, listed);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/access-codes", operationId: "createAccessCode", tag,
      access: "member", params: idParams, resource: "reservation", body: createAccessCodeBody, prefer: true, problems: ["access-code-in-use", "lifecycle-transition-refused", "unprocessable"],
      summary: "Issue a door code for the stay; by default six random digits valid from check-in to check-out.",
      success: createdResponses(accessCode),
    }, async ({ db, params, body, request, missing }) => {
      const row = await insertAccessCode(db, params.id, body);
      if (!row) throw missing();
      return written(request, row, {
        created: { location: locationOf(request, `reservations/${params.id}/access-codes/${row.id}`) },
      });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/reservations/{id}/access-codes/{codeId}", operationId: "getAccessCode",
      tag, access: "member", summary: "Read one door code.", params: accessCodeParams, resource: "access code",
      success: [{ status: 200, description: "The access code.", schema: accessCode, headers: ["ETag"] }],
    }, async ({ db, params, missing }) => {
      const found = await findAccessCode(db, params.id, params.codeId);
      if (!found) throw missing();
      return representation(found);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/reservations/{id}/access-codes/{codeId}/revoke", operationId: "revokeAccessCode",
      tag, access: "member", summary: "Revoke a door code at once.", params: accessCodeParams, resource: "access code",
      prefer: true, problems: ["lifecycle-transition-refused"], success: changedResponses(accessCode, "Done."),
    }, async ({ db, params, request, missing }) => {
      const revoked = await revokeAccessCode(db, params.id, params.codeId);
      if (!revoked) throw missing();
      return written(request, revoked);
    }),
  ];
}
