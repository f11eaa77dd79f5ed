import type { Endpoint } from "../http/endpoint.ts";
import { conditionalUpdate, deleted, listResponse, locationOf, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { deleteGuest, findGuest, insertGuest, listGuests, updateGuest } from "./queries.ts";
import { createGuestBody, guest, listGuestsQuery, updateGuestBody } from "./schema.ts";

const tag = "Guests";
const missing = () => notFound("guest");

// Staff keep guest records; erasing one is for owners and admins.
export function guestEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/guests", operationId: "listGuests", tag, access: "member",
      summary: "List or search the tenant's guests, by last and first name.",
      query: listGuestsQuery,
      success: [{ status: 200, description: "A page of guests.", schema: listOf(guest) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listGuests(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/guests", operationId: "createGuest", tag, access: "member",
      summary: "Create a guest.",
      body: createGuestBody, prefer: true, errors: [422],
      success: [{ status: 201, description: "Created.", schema: guest, headers: ["Location", "ETag"] }],
    }, async ({ db, body, request }) => {
      const created = await insertGuest(db, body);
      return await written(request, created, { created: { location: locationOf(request, `guests/${created.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/guests/{id}", operationId: "getGuest", tag, access: "member",
      summary: "Read a guest.",
      params: idParams,
      success: [{ status: 200, description: "The guest.", schema: guest, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findGuest(db, params.id);
      if (!found) throw missing();
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/guests/{id}", operationId: "updateGuest", tag, access: "member",
      summary: "Update a guest (contract route).",
      params: idParams, body: updateGuestBody, prefer: true, conditional: true, errors: [422],
      success: [
        { status: 204, description: "Updated.", headers: ["ETag"] },
        { status: 200, description: "Updated (Prefer: return=representation).", schema: guest, headers: ["ETag"] },
      ],
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findGuest(db, params.id, { lock: true }),
        update: () => updateGuest(db, params.id, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/guests/{id}", operationId: "deleteGuest", tag, access: "manager",
      summary: "Erase a guest that no reservation refers to.",
      params: idParams, errors: [409],
      success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, params }) => {
      const result = await deleteGuest(db, params.id);
      if (result.numDeletedRows === 0n) throw missing();
      return deleted();
    }),
  ];
}
