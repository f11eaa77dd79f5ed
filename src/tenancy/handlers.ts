import { pageOnly } from "../db/pagination.ts";
import type { Endpoint } from "../http/endpoint.ts";
import { noContent } from "../http/json.ts";
import { changedResponses, createdResponses } from "../http/resource-endpoints.ts";
import { conditionalUpdate, listResponse, locationOf, pageFor, representation, written } from "../http/respond.ts";
import { listOf } from "../http/schemas.ts";
import { sessionEndpoint, tenantEndpoint } from "../http/session-endpoints.ts";
import {
  addMember,
  changeMemberRole,
  createTenant,
  deleteTenant,
  findMember,
  findTenant,
  listMembers,
  listMyTenants,
  lockTenant,
  removeMember,
  updateTenant,
} from "./queries.ts";
import type { RequestScope } from "../http/request-scope.ts";
import {
  addMemberBody,
  changeMemberBody,
  createTenantBody,
  createdMember,
  member,
  memberParams,
  myTenant,
  tenant,
  tenantParams,
  updateTenantBody,
} from "./schema.ts";

const tag = "Tenants";

export function tenancyEndpoints(scope: RequestScope): Endpoint[] {
  return [
    sessionEndpoint(scope, {
      method: "GET", path: "/v1/tenants", operationId: "listMyTenants", tag, countable: true,
      summary: "The tenants the signed-in user belongs to, with their role.", query: pageOnly,
      success: [{ status: 200, description: "A page of tenants.", schema: listOf(myTenant) }],
    }, async ({ db, query, request }) => {
      const page = pageFor(request, query);
      return listResponse(page, await listMyTenants(db, page));
    }),

    sessionEndpoint(scope, {
      method: "POST", path: "/v1/tenants", operationId: "createTenant", tag, prefer: true, problems: ["unprocessable"],
      summary: "Create a tenant; the caller becomes its owner.", body: createTenantBody,
      success: createdResponses(tenant, "Created."),
    }, async ({ db, body, request }) => {
      const { name, ...settings } = body;
      const inserted = await createTenant(db, name);
      const created = Object.keys(settings).length > 0 ? await updateTenant(db, inserted.id, settings) : inserted;
      if (!created) throw new Error("a new tenant is not visible to its owner");
      return written(request, created, { created: { location: locationOf(request, `tenants/${created.id}`) } });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/tenants/{tenantId}", operationId: "getTenant", tag, access: "member", tenantFrom: "path",
      summary: "Read a tenant and its settings.", params: tenantParams, resource: "tenant",
      success: [{ status: 200, description: "The tenant.", schema: tenant, headers: ["ETag"] }],
    }, async ({ db, tenantId, missing }) => {
      const found = await findTenant(db, tenantId);
      if (!found) throw missing();
      return representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/tenants/{tenantId}", operationId: "updateTenant", tag, access: "manager",
      tenantFrom: "path", summary: "Change a tenant's name or settings.", params: tenantParams, resource: "tenant",
      body: updateTenantBody, prefer: true, conditional: true, problems: ["unprocessable"],
      success: changedResponses(tenant),
    }, ({ db, tenantId, body, request, missing }) =>
      conditionalUpdate(request, {
        lock: () => lockTenant(db, tenantId),
        update: () => updateTenant(db, tenantId, body),
        notFound: missing,
      })),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/tenants/{tenantId}", operationId: "deleteTenant", tag, access: "manager",
      tenantFrom: "path", summary: "Delete a tenant and everything in it. Owners only.", params: tenantParams, resource: "tenant",
      ownerOnly: "Only an owner may delete the tenant.", success: [{ status: 204, description: "Deleted." }],
    }, async ({ db, tenantId, missing }) => {
      const result = await deleteTenant(db, tenantId);
      if (result.numDeletedRows === 0n) throw missing();
      return noContent();
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/tenants/{tenantId}/members", operationId: "listMembers", tag, access: "member",
      tenantFrom: "path", countable: true, summary: "The tenant's members, by email.", params: tenantParams, resource: "tenant", query: pageOnly,
      success: [{ status: 200, description: "A page of members.", schema: listOf(member) }],
      resourceAt: { path: "/v1/tenants/{tenantId}/members/{userId}", idField: "userId" },
    }, async ({ db, query, request }) => {
      const page = pageFor(request, query);
      return listResponse(page, await listMembers(db, page));
    }),

    tenantEndpoint(scope, {
      method: "POST", path: "/v1/tenants/{tenantId}/members", operationId: "addMember", tag, access: "manager",
      tenantFrom: "path", summary: "Add an existing user by email. Only owners grant the owner role.",
      params: tenantParams, resource: "tenant", body: addMemberBody, prefer: true, problems: ["already-a-member"],
      success: createdResponses(member, "Added.", { created: createdMember }),
      resourceAt: { path: "/v1/tenants/{tenantId}/members/{userId}", idField: "userId" },
    }, async ({ db, body, request, tenantId }) => {
      const userId = await addMember(db, body.email, body.role);
      const added = await findMember(db, userId);
      if (!added) throw new Error("a new member is not visible");
      return written(request, added, {
        created: { location: locationOf(request, `tenants/${tenantId}/members/${userId}`), idField: "userId" },
      });
    }),

    tenantEndpoint(scope, {
      method: "GET", path: "/v1/tenants/{tenantId}/members/{userId}", operationId: "getMember", tag, access: "member",
      tenantFrom: "path", summary: "Read one member.", params: memberParams, resource: "member",
      success: [{ status: 200, description: "The member.", schema: member, headers: ["ETag"] }],
    }, async ({ db, params, missing }) => {
      const found = await findMember(db, params.userId);
      if (!found) throw missing();
      return representation(found);
    }),

    tenantEndpoint(scope, {
      method: "PATCH", path: "/v1/tenants/{tenantId}/members/{userId}", operationId: "changeMemberRole", tag,
      access: "manager", tenantFrom: "path", params: memberParams, resource: "member", body: changeMemberBody, prefer: true,
      summary: "Change a member's role. Only owners grant or revoke owner; a tenant keeps one owner.",
      problems: ["last-owner"],
      success: changedResponses(member, "Changed."),
    }, async ({ db, params, body, request, missing }) => {
      await changeMemberRole(db, params.userId, body.role);
      const changed = await findMember(db, params.userId);
      if (!changed) throw missing();
      return written(request, changed);
    }),

    tenantEndpoint(scope, {
      method: "DELETE", path: "/v1/tenants/{tenantId}/members/{userId}", operationId: "removeMember", tag,
      access: "member", tenantFrom: "path", params: memberParams, resource: "member", problems: ["last-owner"],
      summary: "Remove a member (managers), or leave the tenant (anyone, their own membership).",
      success: [{ status: 204, description: "Removed." }],
    }, async ({ db, params }) => {
      await removeMember(db, params.userId);
      return noContent();
    }),
  ];
}
