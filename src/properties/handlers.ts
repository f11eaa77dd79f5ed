import type { Endpoint } from "../http/endpoint.ts";
import { conditionalUpdate, deleted, listResponse, locationOf, representation, written } from "../http/respond.ts";
import { idParams, listOf } from "../http/schemas.ts";
import { notFound, tenantEndpoint } from "../tenancy/endpoints.ts";
import type { RequestScope } from "../tenancy/request-scope.ts";
import {
  deleteProperty,
  findProperty,
  insertProperty,
  listProperties,
  updateProperty,
} from "./queries.ts";
import { createPropertyBody, listPropertiesQuery, property, updatePropertyBody } from "./schema.ts";

const tag = "Properties";
const missing = () => notFound("property");

export function propertyEndpoints(scope: RequestScope): Endpoint[] {
  return [
    tenantEndpoint(scope, {
      method: "GET", path: "/v1/properties", operationId: "listProperties", tag, access: "member",
      summary: "List the tenant's properties, by name.",
      query: listPropertiesQuery,
      success: [{ status: 200, description: "A page of properties.", schema: listOf(property) }],
    }, async ({ db, query }) => {
      const { data, pagination } = await listProperties(db, query, query);
      return listResponse(data, pagination);
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/properties", operationId: "createProperty", tag, access: "manager",
      summary: "Create a property.",
      body: createPropertyBody, prefer: true, errors: [409, 422],
      success: [{ status: 201, description: "Created.", schema: property, headers: ["Location", "ETag"] }],
    }, async ({ db, body, request }) => {
      const created = await insertProperty(db, body);
      return await written(request, created, { created: { location: locationOf(request, `properties/${created.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/properties/{id}", operationId: "getProperty", tag, access: "member",
      summary: "Read a property.",
      params: idParams,
      success: [{ status: 200, description: "The property.", schema: property, headers: ["ETag"] }],
    }, async ({ db, params }) => {
      const found = await findProperty(db, params.id);
      if (!found) throw missing();
      return await representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/properties/{id}", operationId: "updateProperty", tag, access: "manager",
      summary: "Update a property (contract route). Archive it with status archived.",
      params: idParams, body: updatePropertyBody, prefer: true, conditional: true, errors: [409, 422],
      success: [
        { status: 204, description: "Updated.", headers: ["ETag"] },
        { status: 200, description: "Updated (Prefer: return=representation).", schema: property, headers: ["ETag"] },
      ],
    }, ({ db, params, body, request }) =>
      conditionalUpdate(request, {
        lock: () => findProperty(db, params.id, { lock: true }),
        update: () => updateProperty(db, params.id, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/properties/{id}", operationId: "deleteProperty", tag, access: "manager",
      summary: "Delete a property that nothing refers to yet; otherwise archive it.",
      params: idParams, errors: [409],
      success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, params }) => {
      const result = await deleteProperty(db, params.id);
      if (result.numDeletedRows === 0n) throw missing();
      return deleted();
    }),
  ];
}
