import type { Endpoint } from "../http/endpoint.ts";
import { conditionalUpdate, deleted, listResponse, locationOf, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { deleteUnit, findUnit, insertUnit, listUnits, updateUnit } from "./queries.ts";
import { createUnitBody, listUnitsQuery, unit, updateUnitBody } from "./schema.ts";

const tag = "Units";
const missing = () => notFound("unit");

export function unitEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/units", operationId: "listUnits", tag, access: "member",
      summary: "List the tenant's units, by property and name.",
      query: listUnitsQuery,
      success: [{ status: 200, description: "A page of units.", schema: listOf(unit) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listUnits(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/units", operationId: "createUnit", tag, access: "manager",
      summary: "Create a unit in a property.",
      body: createUnitBody, prefer: true, errors: [409, 422],
      success: [{ status: 201, description: "Created.", schema: unit, headers: ["Location", "ETag"] }],
    }, async ({ db, body, request }) => {
      const created = await insertUnit(db, body);
      return await written(request, created, { created: { location: locationOf(request, `units/${created.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/units/{id}", operationId: "getUnit", tag, access: "member",
      summary: "Read a unit.",
      params: idParams,
      success: [{ status: 200, description: "The unit.", schema: unit, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findUnit(db, params.id);
      if (!found) throw missing();
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/units/{id}", operationId: "updateUnit", tag, access: "manager",
      summary: "Update a unit. Retire it with status archived; it cannot move to another property.",
      params: idParams, body: updateUnitBody, prefer: true, conditional: true, errors: [409, 422],
      success: [
        { status: 204, description: "Updated.", headers: ["ETag"] },
        { status: 200, description: "Updated (Prefer: return=representation).", schema: unit, headers: ["ETag"] },
      ],
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findUnit(db, params.id, { lock: true }),
        update: () => updateUnit(db, params.id, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/units/{id}", operationId: "deleteUnit", tag, access: "manager",
      summary: "Delete a unit that nothing refers to yet; otherwise archive it.",
      params: idParams, errors: [409],
      success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, params }) => {
      const result = await deleteUnit(db, params.id);
      if (result.numDeletedRows === 0n) throw missing();
      return deleted();
    }),
  ];
}
