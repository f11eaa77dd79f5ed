// The endpoints of a signed-in user, run in the request scope (src/tenancy/request-scope.ts):
// outside any tenant (sessionEndpoint) or inside the one the request names (tenantEndpoint).
import type { z } from "zod";
import type { Reads } from "../db/reads.ts";
import type { RequestScope, Session, TenantRole } from "./request-scope.ts";
import {
  type Docs,
  type Endpoint,
  type HandlerDb,
  type Method,
  notFound,
  type ParsedInput,
  parseBody,
  parseInput,
  parseParams,
  parseQuery,
} from "./endpoint.ts";
import { HttpError } from "./problem.ts";
import { id } from "./schemas.ts";

const TENANT_HEADER = "x-tenant-id";

function headerTenant(request: Request): string {
  const value = request.headers.get(TENANT_HEADER);
  if (value === null) {
    throw new HttpError("validation", `Send the ${TENANT_HEADER} header naming the tenant to act in.`, {
      errors: [{ path: TENANT_HEADER, message: "Required." }],
    });
  }
  if (!id.safeParse(value).success) {
    throw new HttpError("validation", `The ${TENANT_HEADER} header must be a tenant id (a UUID).`, {
      errors: [{ path: TENANT_HEADER, message: "Not a UUID." }],
    });
  }
  return value;
}

// Naming a tenant in the path asks whether it exists: a malformed id is an unknown one.
function pathTenant(value: string | undefined): string {
  if (value === undefined || !id.safeParse(value).success) throw notFound("tenant");
  return value;
}

// A handler's `db` follows its route's method (HandlerDb): a GET's handler reads.
export type SessionContext<P, Q, B, M extends Method = Method> = Session<HandlerDb<M>> & ParsedInput<P, Q, B> & {
  request: Request;
};
// `missing` is the 404 of this route, the same whether the path was malformed, unknown or another tenant's.
// The caller's role is judged before the handler's answer counts (see `authorize`), so no handler needs it.
export type TenantContext<P, Q, B, M extends Method = Method> = Session<HandlerDb<M>> & ParsedInput<P, Q, B> & {
  tenantId: string;
  request: Request;
  missing: () => HttpError;
};

// A route for any signed-in user, outside any tenant (their tenant list, creating one).
// A GET is read as a tenant's GET is, in scope.read, with no tenant and so no role to
// judge; any other method runs in scope.run's one transaction.
export function sessionEndpoint<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  M extends Method = Method,
>(scope: RequestScope, doc: Docs<P, Q, B, M>, work: (context: SessionContext<P, Q, B, M>) => Promise<Response>): Endpoint {
  // A transaction is what either kind of handler may be given; the compiler cannot
  // follow the method from `doc` to the handler's type, so it is told.
  const handler = work as (context: SessionContext<P, Q, B>) => Promise<Response>;
  return {
    ...doc,
    access: "session",
    handle: async (request, params) => {
      const credentials = await scope.authenticate(request);
      const input = await parseInput(doc, request, params);
      if (doc.method === "GET") return await scope.read(credentials, null, (session) => handler({ ...session, ...input, request }), () => {});
      return await scope.run(credentials, null, (session) => handler({ ...session, ...input, request }));
    },
  };
}

// A route inside one tenant. The tenant comes from x-tenant-id (or the path for
// /v1/tenants/{tenantId}/...), RLS filters every query, and "manager" routes are
// refused to staff: a write before any query runs; a read, whose context goes with
// each of its statements, before anything it found is answered.
export function tenantEndpoint<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  M extends Method = Method,
>(
  scope: RequestScope,
  // ownerOnly: the refusal for admins of a manager route only owners may use.
  doc: Docs<P, Q, B, M> & { access: "member" | "manager"; ownerOnly?: string },
  work: (context: TenantContext<P, Q, B, M>) => Promise<Response>,
): Endpoint {
  // A GET runs in scope.read and its handler gets Reads; any other method runs in
  // scope.run with the transaction. The compiler cannot follow `doc.method` to M, so the
  // handler is taken as one that accepts either, and the branch below gives each its own.
  const handler = work as (context: TenantContext<P, Q, B>) => Promise<Response>;
  const fromPath = doc.tenantFrom === "path";
  if (doc.params && !doc.resource) throw new Error(`${doc.operationId}: name the resource its path names, for its 404`);
  const missing = () => notFound(doc.resource);
  const authorize = (role: TenantRole | null) => {
    if (role === null) {
      // Naming a tenant in the path is asking whether it exists; the header is not.
      throw fromPath ? notFound("tenant") : new HttpError("forbidden", "You are not a member of this tenant.");
    }
    if (doc.access === "manager" && role === "staff") {
      throw new HttpError("forbidden", "Only the tenant's owners and admins may do this.");
    }
    if (doc.ownerOnly && role !== "owner") throw new HttpError("forbidden", doc.ownerOnly);
  };
  return {
    ...doc,
    handle: async (request, params) => {
      const credentials = await scope.authenticate(request);
      const named = fromPath ? pathTenant(params.tenantId) : headerTenant(request);
      const query = parseQuery(doc.query as Q, request);
      const body = await parseBody(doc.body as B, request);
      const tenantId = named.toLowerCase();
      // After the tenant: a malformed id must answer as an unknown one does, and
      // for a caller outside the tenant that is the tenant's answer.
      const input = <Db extends Reads>(session: Session<Db>) => ({
        ...session, tenantId, params: parseParams(doc.params as P, params, doc.resource), query, body, request, missing,
      });
      if (doc.method === "GET") return await scope.read(credentials, tenantId, (session) => handler(input(session)), authorize);
      return await scope.run(credentials, tenantId, (session, role) => {
        authorize(role);
        return handler(input(session));
      });
    },
  };
}
