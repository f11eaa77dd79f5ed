import type { Transaction } from "kysely";
import { z } from "zod";
import type { DB } from "../db/database.ts";
import type { Listed, Page } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import { deleteRefusal } from "./database-refusals.ts";
import type { Endpoint, SuccessDoc } from "./endpoint.ts";
import { noContent } from "./json.ts";
import type { ProblemKind } from "./problem.ts";
import type { RequestScope } from "./request-scope.ts";
import { conditionalUpdate, listResponse, locationOf, pageFor, representation, written } from "./respond.ts";
import { createdId, idParams, listOf } from "./schemas.ts";
import { tenantEndpoint } from "./session-endpoints.ts";

// The list and the read are GETs, whose queries read (see Reads); the rest write in
// the request's transaction.
type Db = Transaction<DB>;

// What a route of a resource states itself; the rest follows from the resource.
type RouteDoc = { summary: string; access: "member" | "manager"; problems?: ProblemKind[] };

export type Resource = {
  tag: string;
  // The path segment under /v1: "rate-plans".
  collection: string;
  // For operation ids: { one: "RatePlan", many: "RatePlans" }.
  name: { one: string; many: string };
  // For descriptions and the 404's detail: { one: "rate plan", many: "rate plans" }.
  noun: { one: string; many: string };
  schema: z.ZodType;
};

// A write that answers 204, or 200 with the resource under Prefer: return=representation.
export function changedResponses(schema: z.ZodType, done = "Updated."): SuccessDoc[] {
  return [
    { status: 204, description: done, headers: ["ETag"] },
    { status: 200, description: `${done.replace(/\.$/, "")} (Prefer: return=representation).`, schema, headers: ["ETag"] },
  ];
}

// A create: 201 with Location and ETag. Its body is the new resource's id, or the
// resource under Prefer: return=representation; the document says both as one schema,
// for one status has one body a generated client parses. With `emptyByDefault`, for the
// contract's routes documented empty, the body is empty unless the resource is asked for.
export function createdResponses(
  schema: z.ZodType,
  done = "Created.",
  options: { emptyByDefault?: boolean; created?: z.ZodType } = {},
): SuccessDoc[] {
  if (options.emptyByDefault) {
    return [{
      status: 201,
      description: `${done} Location names the new resource. The body is empty, or the resource under Prefer: return=representation.`,
      representation: schema,
      headers: ["Location", "ETag"],
    }];
  }
  return [{
    status: 201,
    description: `${done} Location names the new resource. The body is its id, or the resource under Prefer: return=representation.`,
    schema: z.union([schema, options.created ?? createdId]),
    headers: ["Location", "ETag"],
  }];
}

// The list, create, read, update and delete routes of a tenant's resource: one shape
// for every resource, so the handlers, the document and the errors cannot drift apart.
export function resourceEndpoints(scope: RequestScope, { tag, collection, name, noun, schema }: Resource) {
  const path = `/v1/${collection}`;
  const resource = noun.one;

  return {

    list<Q extends z.ZodObject>(
      doc: RouteDoc & { query: Q },
      list: (db: Reads, filter: z.output<Q>, page: Page) => Promise<Listed<unknown>>,
    ): Endpoint {
      return tenantEndpoint(scope, {
        method: "GET", path, operationId: `list${name.many}`, tag, countable: true, ...doc,
        success: [{ status: 200, description: `A page of ${noun.many}.`, schema: listOf(schema) }],
      }, async ({ db, query, request, tenantId }) => {
        const filter = query as z.output<Q>;
        const page = pageFor(request, filter as Page, { reader: "member", tenantId });
        return listResponse(page, await list(db, filter, page));
      });
    },

    create<B extends z.ZodType>(
      doc: RouteDoc & { body: B },
      insert: (db: Db, input: z.output<B>) => Promise<{ id: string }>,
    ): Endpoint {
      return tenantEndpoint(scope, {
        method: "POST", path, operationId: `create${name.one}`, tag, prefer: true, ...doc,
        success: createdResponses(schema, "Created."),
      }, async ({ db, body, request }) => {
        const created = await insert(db, body as z.output<B>);
        return written(request, created, { created: { location: locationOf(request, `${collection}/${created.id}`) } });
      });
    },

    get(doc: RouteDoc, find: (db: Reads, id: string) => Promise<unknown>): Endpoint {
      return tenantEndpoint(scope, {
        method: "GET", path: `${path}/{id}`, operationId: `get${name.one}`, tag, params: idParams, resource, ...doc,
        success: [{ status: 200, description: `The ${noun.one}.`, schema, headers: ["ETag"] }],
      }, async ({ db, params, missing }) => {
        const found = await find(db, params.id);
        if (found === undefined) throw missing();
        return representation(found);
      });
    },

    // If-Match is compared with the row read under lock; without it the PATCH is one UPDATE.
    update<B extends z.ZodType>(
      doc: RouteDoc & { body: B },
      queries: {
        lock: (db: Db, id: string) => Promise<unknown>;
        update: (db: Db, id: string, input: z.output<B>) => Promise<unknown>;
      },
    ): Endpoint {
      return tenantEndpoint(scope, {
        method: "PATCH", path: `${path}/{id}`, operationId: `update${name.one}`, tag, params: idParams, resource,
        prefer: true, conditional: true, ...doc, success: changedResponses(schema),
      }, ({ db, params, body, request, missing }) =>
        conditionalUpdate(request, {
          lock: () => queries.lock(db, params.id),
          update: () => queries.update(db, params.id, body as z.output<B>),
          notFound: missing,
        }));
    },

    remove(doc: RouteDoc, remove: (db: Db, id: string) => Promise<{ numDeletedRows: bigint }>): Endpoint {
      return tenantEndpoint(scope, {
        method: "DELETE", path: `${path}/{id}`, operationId: `delete${name.one}`, tag, params: idParams, resource, ...doc,
        success: [{ status: 204, description: "Deleted." }],
      }, async ({ db, params, missing }) => {
        const result = await remove(db, params.id).catch((error: unknown) => {
          throw deleteRefusal(error, collection) ?? error;
        });
        if (result.numDeletedRows === 0n) throw missing();
        return noContent();
      });
    },
  };
}
