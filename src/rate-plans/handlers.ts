import type { Endpoint } from "../http/endpoint.ts";
import { conditionalUpdate, deleted, listResponse, locationOf, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import { deleteRatePlan, findRatePlan, insertRatePlan, listRatePlans, updateRatePlan } from "./queries.ts";
import { createRatePlanBody, listRatePlansQuery, ratePlan, updateRatePlanBody } from "./schema.ts";

const tag = "Rate plans";
const missing = () => notFound("rate plan");

export function ratePlanEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/rate-plans", operationId: "listRatePlans", tag, access: "member",
      summary: "List the tenant's rate plans, by property and code.",
      query: listRatePlansQuery,
      success: [{ status: 200, description: "A page of rate plans.", schema: listOf(ratePlan) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listRatePlans(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/rate-plans", operationId: "createRatePlan", tag, access: "manager",
      summary: "Create a rate plan for a property.",
      body: createRatePlanBody, prefer: true, errors: [409, 422],
      success: [{ status: 201, description: "Created.", schema: ratePlan, headers: ["Location", "ETag"] }],
    }, async ({ db, body, request }) => {
      const created = await insertRatePlan(db, body);
      return await written(request, created, { created: { location: locationOf(request, `rate-plans/${created.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/rate-plans/{id}", operationId: "getRatePlan", tag, access: "member",
      summary: "Read a rate plan.",
      params: idParams,
      success: [{ status: 200, description: "The rate plan.", schema: ratePlan, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findRatePlan(db, params.id);
      if (!found) throw missing();
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/rate-plans/{id}", operationId: "updateRatePlan", tag, access: "manager",
      summary: "Update a rate plan (contract route). Its property and currency stay; withdraw it with active false.",
      params: idParams, body: updateRatePlanBody, prefer: true, conditional: true, errors: [409, 422],
      success: [
        { status: 204, description: "Updated.", headers: ["ETag"] },
        { status: 200, description: "Updated (Prefer: return=representation).", schema: ratePlan, headers: ["ETag"] },
      ],
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findRatePlan(db, params.id, { lock: true }),
        update: () => updateRatePlan(db, params.id, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/rate-plans/{id}", operationId: "deleteRatePlan", tag, access: "manager",
      summary: "Delete a rate plan that no reservation uses; otherwise deactivate it.",
      params: idParams, errors: [409],
      success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, params }) => {
      const result = await deleteRatePlan(db, params.id);
      if (result.numDeletedRows === 0n) throw missing();
      return deleted();
    }),
  ];
}
