import type { Transaction } from "kysely";
import { z } from "zod";
import type { DB } from "../db/database.ts";
import type { Reads } from "../db/reads.ts";
import { fieldErrors, readJson, refuseNul } from "./json.ts";
import { HttpError, type ProblemKind } from "./problem.ts";
import { isDomainRuleIssue } from "./schemas.ts";
import type { Handler, Params } from "./router.ts";

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

// What a handler of a route with this method queries with: a GET reads, statement by
// statement for all it knows (see Reads); any other method writes, in one transaction.
export type HandlerDb<M extends Method> = M extends "GET" ? Reads : Transaction<DB>;

// Who may call an endpoint: anyone, any signed-in user, or a member of the request's
// tenant; "manager" is an owner or admin of it; "integration" is an API key's holder;
// "webhook" a provider whose post carries its signature (no session, no tenant).
export type Access = "public" | "session" | "member" | "manager" | "integration" | "webhook";

// A header a route reads besides the credentials, for the document.
export type HeaderDoc = { name: string; description: string; required: boolean; schema: Record<string, unknown> };

export type SuccessDoc = {
  status: number;
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  headers?: ("ETag" | "Location")[];
  // The body under Prefer: return=representation, of an answer whose body is otherwise
  // empty. Kept out of `schema`, so that a generated client reads the empty body it gets
  // by default instead of failing to parse it; the document carries it as
  // x-prefer-representation.
  representation?: z.ZodType;
};

// Everything the OpenAPI document says of an endpoint; the same schemas validate requests.
export type EndpointDoc = {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  // Tenant routes read the tenant from x-tenant-id, except /v1/tenants/{id}/..., which name it in the path.
  tenantFrom?: "header" | "path";
  params?: z.ZodObject;
  // What the path names, for the 404 when it names nothing the caller can see.
  resource?: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  success: SuccessDoc[];
  // Problem types beyond those the access and inputs imply; the registry gives each its status.
  problems?: ProblemKind[];
  // What a status means on this route, where the document's general wording would not say
  // (what a client should do).
  errorDescriptions?: Partial<Record<number, string>>;
  // Accepts If-Match and answers 412 when it no longer matches.
  conditional?: boolean;
  // Answers without a body unless Prefer: return=representation.
  prefer?: boolean;
  // A list: takes Prefer: count=... and answers Preference-Applied (src/db/pagination.ts).
  countable?: boolean;
  // Accepts Idempotency-Key: a retry with the same key gets the first answer.
  idempotent?: boolean;
  // Where the resources this route answers with live, when not at `${path}/{param}`, and
  // which of their fields fills that path's last parameter (for the document's links).
  resourceAt?: { path: string; idField?: string };
  // A webhook's signature: the security scheme it is (components.securitySchemes).
  signature?: "sendGridSignature" | "smsSignature";
  // What the credentials must allow, as the security requirement's scopes: an API key's
  // scope on an integration route.
  scopes?: string[];
  // Headers the route reads besides the credentials.
  headers?: HeaderDoc[];
  // The body's media type, when it is not application/json.
  bodyMediaType?: string;
};

export type Endpoint = EndpointDoc & { handle: Handler };

export type Input<S> = S extends z.ZodType ? z.output<S> : undefined;

export type ParsedInput<P, Q, B> = { params: Input<P>; query: Input<Q>; body: Input<B> };

// A path that names nothing this caller can see is a 404, however it is malformed:
// a bad id and another tenant's id must be indistinguishable.
export function parseParams<P extends z.ZodObject | undefined>(schema: P, params: Params, resource?: string): Input<P> {
  if (!schema) return undefined as Input<P>;
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw notFound(resource);
  return parsed.data as Input<P>;
}

export function notFound(resource = "resource"): HttpError {
  return new HttpError("not-found", `No such ${resource}.`);
}

export function parseQuery<Q extends z.ZodObject | undefined>(schema: Q, request: Request): Input<Q> {
  const url = new URL(request.url);
  if (!schema) {
    if (url.searchParams.size > 0) {
      throw new HttpError("validation", "This route takes no query parameters.");
    }
    return undefined as Input<Q>;
  }
  const values: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (key in values) {
      throw new HttpError("validation", `The query parameter ${key} is given more than once.`, {
        errors: [{ path: key, message: "Give it once." }],
      });
    }
    values[key] = value;
  }
  refuseNul(values, "The query parameters");
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    const errors = fieldErrors(parsed.error, "(query)");
    // As for a body: parameters that match the document and break a rule between them
    // (a departure before the arrival) are a 422.
    if (parsed.error.issues.every(isDomainRuleIssue)) {
      throw new HttpError("unprocessable", parsed.error.issues.map((issue) => issue.message).join(" "), { errors });
    }
    throw new HttpError("validation", "The query parameters are invalid.", { errors });
  }
  return parsed.data as Input<Q>;
}

export async function parseBody<B extends z.ZodType | undefined>(schema: B, request: Request): Promise<Input<B>> {
  if (!schema) return undefined as Input<B>;
  return await readJson(request, schema) as Input<B>;
}

export async function parseInput<P extends z.ZodObject | undefined, Q extends z.ZodObject | undefined, B extends z.ZodType | undefined>(
  doc: { params?: P; query?: Q; body?: B; resource?: string },
  request: Request,
  params: Params,
): Promise<ParsedInput<P, Q, B>> {
  return {
    params: parseParams(doc.params as P, params, doc.resource),
    query: parseQuery(doc.query as Q, request),
    body: await parseBody(doc.body as B, request),
  };
}

// An endpoint's documentation with its schemas typed, for the builders to infer inputs from.
export type Docs<P, Q, B, M extends Method = Method> = Omit<EndpointDoc, "method" | "params" | "query" | "body" | "access"> & {
  method: M;
  params?: P;
  query?: Q;
  body?: B;
};

// A route anyone may call: sign-in, sign-up, health, the API's own description.
export function publicEndpoint<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(doc: Docs<P, Q, B>, work: (context: ParsedInput<P, Q, B> & { request: Request }) => Promise<Response> | Response): Endpoint {
  return {
    ...doc,
    access: "public",
    handle: async (request, params) => await work({ ...(await parseInput(doc, request, params)), request }),
  };
}
