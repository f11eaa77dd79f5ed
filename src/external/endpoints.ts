import type { z } from "zod";
import type { ApiKeyScope } from "../api-keys/schema.ts";
import {
  type Docs,
  type Endpoint,
  type HandlerDb,
  type Method,
  notFound,
  type ParsedInput,
  parseBody,
  parseParams,
  parseQuery,
} from "../http/endpoint.ts";
import { httpErrorFromDatabase } from "../http/database-refusals.ts";
import { clientAddress } from "../http/client-address.ts";
import { HttpError } from "../http/problem.ts";
import { idempotencyKeyOf, once, requestHash } from "./idempotency.ts";
import type { Integration, IntegrationScope } from "./integration-scope.ts";
import { type RateLimit, rateLimitHeaders } from "./rate-limit.ts";

// A GET's handler reads (HandlerDb), though the route runs in one transaction.
export type IntegrationContext<P, Q, B, M extends Method = Method> = Omit<Integration, "db" | "rateLimit"> & ParsedInput<P, Q, B> & {
  db: HandlerDb<M>;
  request: Request;
  // The route's 404, the same for a malformed id, an unknown one, another property's and another tenant's.
  missing: () => HttpError;
};

// The answer with the key's RateLimit fields.
function withRateLimit(response: Response, limit: RateLimit): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(rateLimitHeaders(limit))) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

function insufficientScope(requires: ApiKeyScope): HttpError {
  return new HttpError("insufficient-scope", `This route needs an API key with the ${requires} scope.`, {
    members: { requiredScope: requires },
  });
}

// The parsed input, or its 422 kept to be thrown when the input is asked for; any other
// refusal (a 400) at once.
async function afterTheKey<T>(parse: () => T | Promise<T>): Promise<() => T> {
  try {
    const value = await parse();
    return () => value;
  } catch (error) {
    if (error instanceof HttpError && error.kind === "unprocessable") {
      return () => {
        throw error;
      };
    }
    throw error;
  }
}

// A route under /v1/external: the API key names the tenant and the properties, RLS as
// api_integration limits every query to them, the route runs only for a key that holds
// the scope it requires, and every write honours Idempotency-Key. Every
// answer to a request the key's rate limit counted carries its RateLimit fields, a
// refusal as well as a success; what is refused before the key is read (a missing or
// malformed key, query or body) is not counted and carries none.
export function integrationEndpoint<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  M extends Method = Method,
>(
  scope: IntegrationScope,
  doc: Docs<P, Q, B, M> & { requires: ApiKeyScope },
  work: (context: IntegrationContext<P, Q, B, M>) => Promise<Response>,
): Endpoint {
  // The transaction is what either kind of handler may be given; the compiler cannot
  // follow the method from `doc` to the handler's type, so it is told.
  const handler = work as (context: IntegrationContext<P, Q, B>) => Promise<Response>;
  if (doc.params && !doc.resource) throw new Error(`${doc.operationId}: name the resource its path names, for its 404`);
  const missing = () => notFound(doc.resource);
  const idempotent = doc.method !== "GET";
  const { requires, ...described } = doc;
  return {
    ...described,
    access: "integration",
    scopes: [requires],
    idempotent,
    handle: async (request, params) => {
      const key = scope.authenticate(request);
      const idempotencyKey = idempotent ? idempotencyKeyOf(request) : null;
      // A query or body of the right shape that breaks a rule between its fields (a 422) is
      // a refusal of the domain, which a key's request meets once it is counted, like any other.
      const query = await afterTheKey(() => parseQuery(doc.query as Q, request));
      const body = await afterTheKey(() => parseBody(doc.body as B, request));
      const counted: { limit?: RateLimit } = {};
      try {
        const response = await scope.run(key, clientAddress(request), async ({ rateLimit, ...integration }) => {
          counted.limit = rateLimit;
          // Before the path is read: a key without the scope learns nothing of what it names.
          if (!integration.scopes.includes(requires)) throw insufficientScope(requires);
          // After the key: without a valid one, every path is refused alike.
          const parsedParams = parseParams(doc.params as P, params, doc.resource);
          const input = { params: parsedParams, query: query(), body: body() };
          const run = () => handler({ ...integration, ...input, request, missing });
          if (idempotencyKey === null) return await run();
          const hash = requestHash(doc.operationId, { params: input.params, body: input.body });
          return await once(integration.db, idempotencyKey, hash, run);
        });
        return counted.limit ? withRateLimit(response, counted.limit) : response;
      } catch (error) {
        if (!counted.limit) throw error;
        const refusal = error instanceof HttpError ? error : httpErrorFromDatabase(error);
        throw refusal ? refusal.withHeaders(rateLimitHeaders(counted.limit)) : error;
      }
    },
  };
}
