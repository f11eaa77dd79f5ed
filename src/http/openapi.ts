import { z } from "zod";
import { countModes, ESTIMATED_EXACT_UP_TO } from "../db/pagination.ts";
import type { Endpoint, SuccessDoc } from "./endpoint.ts";
import { type ProblemKind, problemTypes, problemTypeUri } from "./problem.ts";
import { id, problem } from "./schemas.ts";

// The pattern z.uuid() checks, as its JSON Schema states it.
const uuidPattern = (z.toJSONSchema(id) as { pattern: string }).pattern;

type JsonSchema = Record<string, unknown>;
type Components = Record<string, JsonSchema>;

const errorText: Record<number, string> = {
  400: "The request is malformed: a field, parameter or header is invalid.",
  401: "The bearer token is missing, invalid or expired, or its session ended.",
  403: "The caller may not do this in this tenant.",
  404: "No such resource in this tenant (another tenant's id answers the same).",
  409: "The request conflicts with the resource's state; `type` says which way.",
  412: "If-Match no longer matches the resource: read it again.",
  413: "The body is too large.",
  415: "The body is not application/json.",
  422: "The request is well-formed but breaks a rule of the domain.",
  429: "Too many requests from this client; `Retry-After` says how many seconds to wait.",
  503: "The database or Supabase Auth is unreachable, or the request ran past the database's statement timeout. " +
    "A write is never half applied; `Retry-After` says when to try again.",
};

const integrationErrorText: Record<number, string> = {
  401: "The API key is missing, unknown, revoked or expired.",
  403: "The API key lacks the scope this route needs (`requiredScope`).",
  404: "No such resource in the key's properties (another property's or tenant's id answers the same).",
  409: "The first request with this Idempotency-Key has not finished, or the write conflicts with the resource's state.",
  422: "The Idempotency-Key was used for a different request, or the request breaks a rule of the domain.",
  429: "The API key's rate limit for the current window is spent (`RateLimit-Policy: \"api-key\"`), or this client's address " +
    "sent too many unknown API keys (`\"failed-keys\"`): wait the seconds `Retry-After` gives.",
};

// The values of the RateLimit fields (src/external/rate-limit.ts) as the API sends them.
export const RATE_LIMIT_POLICY_PATTERN = '^"(api-key|failed-keys)";q=[0-9]+;w=[0-9]+$';
export const RATE_LIMIT_PATTERN = '^"(api-key|failed-keys)";r=[0-9]+;t=[0-9]+$';

// What an integration route refuses before it reads the key, uncounted and without the
// RateLimit fields: a missing or malformed key, query, header or body, or a database it
// could not reach.
const beforeTheKey = new Set<ProblemKind>(["validation", "unauthorized", "malformed-json", "payload-too-large", "unsupported-media-type", "service-unavailable"]);
const rateLimitHeaders = {
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimitPolicy" },
  "RateLimit": { $ref: "#/components/headers/RateLimit" },
};

// Postgres text cannot hold U+0000, so no request accepts it (src/http/json.ts refuseNul):
// a request string the document leaves free says so with this pattern.
export const NO_NUL_PATTERN = "^[^\\u0000]*$";

function refuseNulInStrings(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(refuseNulInStrings);
  if (!value || typeof value !== "object") return;
  const schema = value as JsonSchema;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("string") && !("pattern" in schema) && !("enum" in schema) && !("const" in schema) && !("allOf" in schema)) {
    schema.pattern = NO_NUL_PATTERN;
  }
  for (const field of Object.values(schema)) refuseNulInStrings(field);
}

// Schemas with a registered id become components; every other schema is inlined.
function schemaOf(schema: z.ZodType, io: "input" | "output", components: Components): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", reused: "inline" }) as JsonSchema;
  if (io === "input") refuseNulInStrings(json);
  const defs = (json.$defs ?? {}) as Components;
  delete json.$defs;
  delete json.$schema;
  for (const [name, def] of Object.entries(defs)) components[name] ??= rewriteRefs(def) as JsonSchema;
  const id = z.globalRegistry.get(schema)?.id;
  const body = rewriteRefs(json) as JsonSchema;
  if (typeof id === "string") {
    components[id] ??= body;
    return { $ref: `#/components/schemas/${id}` };
  }
  return body;
}

// JSON Schema $refs moved from one home of the definitions to another: zod writes
// #/$defs/, OpenAPI keeps them in #/components/schemas/.
export function rewriteRefs(value: unknown, from = "#/$defs/", to = "#/components/schemas/"): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, from, to));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) =>
        key === "$ref" && typeof field === "string" ? [key, field.replace(from, to)] : [key, rewriteRefs(field, from, to)]
      ),
    );
  }
  return value;
}

// The problem types a route may answer: those its access and inputs imply, and its own.
// Every route refuses query parameters it does not define (400); inside a tenant the
// database may refuse a write by role (403) whatever the route's own access says.
function problemKinds(endpoint: Endpoint): ProblemKind[] {
  const kinds = new Set<ProblemKind>(["validation"]);
  if (endpoint.access === "webhook") {
    // A provider's post is refused for its signature, and recorded in the database.
    kinds.add("invalid-signature");
    kinds.add("service-unavailable");
  } else if (endpoint.access !== "public") {
    kinds.add("unauthorized");
    // Every authenticated route reads its caller from the database.
    kinds.add("service-unavailable");
  }
  if (endpoint.access === "integration") kinds.add("too-many-requests");
  if (endpoint.scopes && endpoint.scopes.length > 0) kinds.add("insufficient-scope");
  if (endpoint.access === "member" || endpoint.access === "manager") {
    kinds.add("forbidden");
    if (endpoint.tenantFrom === "path") kinds.add("not-found");
  }
  if (endpoint.params) kinds.add("not-found");
  if (endpoint.body) (["malformed-json", "payload-too-large", "unsupported-media-type"] as const).forEach((kind) => kinds.add(kind));
  if (endpoint.conditional) kinds.add("stale-etag");
  if (endpoint.idempotent) {
    kinds.add("idempotency-key-reused");
    kinds.add("idempotency-key-in-progress");
  }
  for (const kind of endpoint.problems ?? []) kinds.add(kind);
  return [...kinds];
}

function byStatus(kinds: ProblemKind[]): Map<number, ProblemKind[]> {
  const statuses = new Map<number, ProblemKind[]>();
  for (const kind of kinds) {
    const status = problemTypes[kind].status;
    statuses.set(status, [...statuses.get(status) ?? [], kind]);
  }
  return new Map([...statuses].sort(([a], [b]) => a - b));
}

// Every problem type, with its status and what a client does about it: the document's
// list of the values `type` takes.
function problemTypeSchema(): JsonSchema {
  return {
    type: "string",
    description: "The kind of problem, one URN per thing a client handles differently.",
    oneOf: Object.entries(problemTypes).map(([kind, problemType]) => ({
      const: problemTypeUri(kind as ProblemKind),
      title: problemType.title,
      description: problemType.meaning,
      "x-status": problemType.status,
    })),
  };
}

function parameters(endpoint: Endpoint, components: Components): JsonSchema[] {
  const list: JsonSchema[] = [];
  const add = (shape: z.ZodObject | undefined, where: "path" | "query") => {
    if (!shape) return;
    for (const [name, field] of Object.entries(shape.shape as Record<string, z.ZodType>)) {
      const schema = schemaOf(field, "input", components);
      const description = z.globalRegistry.get(field)?.description;
      list.push({
        name,
        in: where,
        required: where === "path" || !field.safeParse(undefined).success,
        schema,
        ...(description ? { description } : {}),
      });
    }
  };
  add(endpoint.params, "path");
  add(endpoint.query, "query");
  for (const header of endpoint.headers ?? []) {
    list.push({ name: header.name, in: "header", required: header.required, schema: header.schema, description: header.description });
  }
  if ((endpoint.access === "member" || endpoint.access === "manager") && endpoint.tenantFrom !== "path") {
    list.push({ $ref: "#/components/parameters/TenantId" });
  }
  if (endpoint.conditional) list.push({ $ref: "#/components/parameters/IfMatch" });
  if (endpoint.prefer) list.push({ $ref: "#/components/parameters/Prefer" });
  if (endpoint.countable) list.push({ $ref: "#/components/parameters/PreferCount" });
  if (endpoint.idempotent) list.push({ $ref: "#/components/parameters/IdempotencyKey" });
  return list;
}

// An integration sends its API key either way; a provider its signature; everyone else a
// Supabase Auth session.
function securityOf(endpoint: Endpoint): Record<string, string[]>[] {
  if (endpoint.access === "public") return [];
  if (endpoint.access === "webhook") return endpoint.signature ? [{ [endpoint.signature]: [] }] : [];
  if (endpoint.access === "integration") {
    const scopes = endpoint.scopes ?? [];
    return [{ apiKeyBearer: scopes }, { apiKeyHeader: scopes }];
  }
  return [{ bearerAuth: [] }];
}

const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);

// Where a collection's items live: the one route `${path}/{param}` beside it.
function itemPath(endpoints: Endpoint[], path: string): string | undefined {
  return endpoints.find((other) => new RegExp(`^${path.replace(/[{}]/g, "\\$&")}/\\{[^}/]+\\}$`).test(other.path))?.path;
}

// OpenAPI links from a response that names a resource to the operations on it, so a client
// (or a fuzzer) can follow a create to its read, update, actions and delete. `from` is the
// JSON pointer of the id in the response body.
// A target's path starts with the resource's, so the resource's id is the parameter at the
// same place in both; any other parameter must be one the source's own path has.
function linksTo(endpoints: Endpoint[], source: Endpoint, resourcePath: string, from: string) {
  const idIndex = pathParams(resourcePath).length - 1;
  const known = new Set(pathParams(source.path));
  const links: Record<string, unknown> = {};
  for (const target of endpoints) {
    if (target === source || (target.path !== resourcePath && !target.path.startsWith(`${resourcePath}/`))) continue;
    const names = pathParams(target.path);
    if (names.some((name, index) => index !== idIndex && !known.has(name))) continue;
    const parameters = Object.fromEntries(
      names.map((name, index) => [name, index === idIndex ? `$response.body#${from}` : `$request.path.${name}`]),
    );
    links[target.operationId] = { operationId: target.operationId, parameters };
  }
  return links;
}

// A create's 201 links to what it created; a list's 200 to its first item.
function linksOf(endpoints: Endpoint[], endpoint: Endpoint, success: SuccessDoc): Record<string, unknown> {
  const target = endpoint.resourceAt?.path ?? itemPath(endpoints, endpoint.path);
  if (!target || !success.schema) return {};
  const idField = endpoint.resourceAt?.idField ?? "id";
  if (endpoint.method === "POST" && success.status === 201) return linksTo(endpoints, endpoint, target, `/${idField}`);
  const isList = endpoint.method === "GET" && success.status === 200 && success.schema instanceof z.ZodObject &&
    "data" in success.schema.shape && !pathParams(endpoint.path).includes(pathParams(target).at(-1)!);
  return isList ? linksTo(endpoints, endpoint, target, `/data/0/${idField}`) : {};
}

// An event the service posts to subscribers' endpoints: OpenAPI 3.1's `webhooks`.
export type OutboundWebhook = { name: string; summary: string; schema: z.ZodType };

// The headers every outbound webhook carries (Standard Webhooks).
const webhookHeaders = [
  ["webhook-id", "The event's id: the same on every attempt and redelivery; a receiver that has seen it can ignore it."],
  ["webhook-timestamp", "When this attempt was signed, in whole seconds since 1970; refuse ones too far from now."],
  ["webhook-signature", "Space-separated v1,<base64 HMAC-SHA256 of id.timestamp.body>, one per active secret (two " +
    "during a rotation's overlap), keyed with the secret's bytes (the whsec_ prefix removed, base64-decoded)."],
] as const;

export function buildOpenApi(
  endpoints: Endpoint[],
  info: { title: string; version: string; description: string },
  outbound: OutboundWebhook[] = [],
) {
  const components: Components = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const problemRef = schemaOf(problem, "output", components);
  // The registry of the values `type` takes, each described once. Problem's `type` stays
  // a string that names it rather than referring to it: a generated client parses a
  // union of constants one constant at a time and fails on the second (openapi-python-
  // client), and a type added to the registry would break a client generated before it.
  // Each response lists its own types in x-problem-types.
  components.ProblemType = problemTypeSchema();
  const problemProperties = components.Problem?.properties as Record<string, JsonSchema> | undefined;
  if (problemProperties) {
    problemProperties.type = {
      type: "string",
      description: "The kind of problem, one URN per thing a client handles differently: one of " +
        "components.schemas.ProblemType; each response lists the ones it may carry in x-problem-types.",
    };
  }

  for (const endpoint of endpoints) {
    const responses: Record<string, unknown> = {};
    const integration = endpoint.access === "integration";
    for (const success of endpoint.success) {
      const links = linksOf(endpoints, endpoint, success);
      const headers = {
        ...Object.fromEntries((success.headers ?? []).map((h) => [h, { $ref: `#/components/headers/${h}` }])),
        // A list's page says which count it honoured.
        ...(endpoint.countable && success.status === 200
          ? { "Preference-Applied": { $ref: "#/components/headers/PreferenceApplied" } }
          : {}),
        ...(integration ? rateLimitHeaders : {}),
      };
      responses[String(success.status)] = {
        description: success.description,
        ...(Object.keys(links).length > 0 ? { links } : {}),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(success.schema
          ? { content: { [success.contentType ?? "application/json"]: { schema: schemaOf(success.schema, "output", components) } } }
          : {}),
        ...(success.representation
          ? { "x-prefer-representation": { "application/json": { schema: schemaOf(success.representation, "output", components) } } }
          : {}),
      };
    }
    for (const [status, kinds] of byStatus(problemKinds(endpoint))) {
      const headers = {
        // Every 429 and 503 says how long to wait.
        ...(status === 429 || status === 503 ? { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } : {}),
        // An integration's request that got past its key was counted, whatever the answer.
        ...(integration && !kinds.some((kind) => beforeTheKey.has(kind)) ? rateLimitHeaders : {}),
      };
      responses[String(status)] = {
        description: `${
          endpoint.errorDescriptions?.[status] ??
            (integration ? integrationErrorText[status] : undefined) ??
            errorText[status] ?? "Error."
        } Problem types: ${kinds.map((kind) => `\`${problemTypeUri(kind)}\``).join(", ")}.`,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        // The problem types this route answers with this status. Each response's body is
        // the one Problem schema, which every generator types; the list narrows `type` in
        // x-problem-types, not by an allOf of Problem and an enum, which generators cannot
        // combine and then drop the response.
        "x-problem-types": kinds.map(problemTypeUri),
        content: { "application/problem+json": { schema: problemRef } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      ...(endpoint.description ? { description: endpoint.description } : {}),
      tags: [endpoint.tag],
      parameters: parameters(endpoint, components),
      ...(endpoint.body
        ? {
          requestBody: {
            required: true,
            content: { [endpoint.bodyMediaType ?? "application/json"]: { schema: schemaOf(endpoint.body, "input", components) } },
          },
        }
        : {}),
      responses,
      security: securityOf(endpoint),
      "x-access": endpoint.access,
    };
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operation;
  }

  const webhooks = Object.fromEntries(outbound.map((hook) => [hook.name, {
    post: {
      operationId: `webhook_${hook.name.replace(/\./g, "_")}`,
      summary: hook.summary,
      tags: ["Webhooks"],
      parameters: webhookHeaders.map(([name, description]) => ({
        name, in: "header", required: true, description, schema: { type: "string" },
      })),
      requestBody: { required: true, content: { "application/json": { schema: schemaOf(hook.schema, "output", components) } } },
      responses: {
        "2XX": { description: "Received. Anything else is retried (410 Gone disables the subscription); see docs/webhooks.md." },
      },
    },
  }]));

  return {
    openapi: "3.1.0",
    info,
    servers: [{ url: "/functions/v1/api", description: "The api function, locally and on a hosted project." }],
    paths,
    ...(outbound.length > 0 ? { webhooks } : {}),
    components: {
      schemas: components,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A Supabase Auth access token." },
        apiKeyBearer: {
          type: "http", scheme: "bearer", bearerFormat: "live_<key id>_<secret>",
          description: "An API key (POST /v1/api-keys) as Authorization: Bearer <key>; each route lists the scope it needs.",
        },
        apiKeyHeader: {
          type: "apiKey", in: "header", name: "X-Api-Key",
          description: "The same API key as X-Api-Key: <key>; it wins when both headers are sent.",
        },
        sendGridSignature: {
          type: "apiKey", in: "header", name: "X-Twilio-Email-Event-Webhook-Signature",
          description: "SendGrid's signed Event Webhook: base64 of a DER ECDSA P-256 signature (SHA-256) of the " +
            "X-Twilio-Email-Event-Webhook-Timestamp header's value followed by the raw body, verified with the " +
            "verification key SendGrid shows (the SENDGRID_WEBHOOK_VERIFICATION_KEY setting).",
        },
        smsSignature: {
          type: "apiKey", in: "header", name: "X-Twilio-Signature",
          description: "Twilio's request signature: base64 of HMAC-SHA1, keyed with the account's auth token (SMS_AUTH_TOKEN), " +
            "of the full URL the provider called followed by each form parameter's name and value, sorted by name.",
        },
      },
      parameters: {
        TenantId: {
          // A UUID by the pattern the server checks, not `format: uuid`: openapi-python-client
          // types such a header as a UUID object and hands it to httpx unconverted, which
          // refuses it, so a generated client could not send the header at all.
          name: "x-tenant-id", in: "header", required: true, schema: { type: "string", pattern: uuidPattern },
          description: "The tenant the request acts in, its id (a UUID); it sets the row-level security context.",
        },
        IfMatch: {
          name: "If-Match", in: "header", required: false, schema: { type: "string" },
          description: "The ETag last read; the write is refused with 412 when the resource changed since.",
        },
        IdempotencyKey: {
          name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", pattern: "^[!-~]{1,255}$" },
          description: "A key of your choosing (1 to 255 visible ASCII characters, like a UUID), unique per request: a retry with the same key and body within 24 hours " +
            "gets the first answer (with Idempotent-Replayed: true) and writes nothing; a different body is a 422.",
        },
        Prefer: {
          name: "Prefer", in: "header", required: false,
          // Any value is accepted: preferences the server does not know are ignored (RFC 7240).
          schema: { anyOf: [{ type: "string", enum: ["return=minimal", "return=representation"] }, { type: "string" }] },
          description: "`return=representation` answers with the resource (201 for a creation, 200 for a change) " +
            "instead of an empty 204; any other preference is ignored, as RFC 7240 requires.",
        },
        PreferCount: {
          name: "Prefer", in: "header", required: false,
          // Any value is accepted, as for Prefer on writes; several preferences go comma-separated.
          schema: { anyOf: [{ type: "string", enum: countModes.map((mode) => `count=${mode}`) }, { type: "string" }] },
          description: "How to count `pagination.total`: `count=exact` (the default) counts every matching item; " +
            "`count=planned` takes the query planner's estimate instead, from the table's statistics, at the cost of " +
            "planning the query once more and never of reading the items; `count=estimated` counts exactly up to " +
            `${ESTIMATED_EXACT_UP_TO.toLocaleString("en")} items and estimates above; \`count=none\` counts nothing ` +
            "(`total` is null, `hasMore` still says whether a page follows). `Preference-Applied` names the count used; " +
            "without it the count is exact (an unknown value, and any other preference, is ignored).",
        },
      },
      headers: {
        ETag: { required: true, schema: { type: "string" }, description: "A strong validator of the representation, for If-Match." },
        Location: { required: true, schema: { type: "string" }, description: "The created resource, relative to the request URL." },
        PreferenceApplied: {
          required: false,
          schema: { type: "string", enum: countModes.map((mode) => `count=${mode}`) },
          description: "The count `pagination.total` was made with, when the request's `Prefer` asked for it " +
            "(RFC 7240). Absent, the count is exact.",
        },
        RetryAfter: { required: true, schema: { type: "string" }, description: "How many seconds to wait before trying again." },
        // draft-ietf-httpapi-ratelimit-headers-11: Structured Fields lists of one item each.
        RateLimitPolicy: {
          required: true,
          schema: { type: "string", pattern: RATE_LIMIT_POLICY_PATTERN },
          description: "The rate limit this request counted against, as the IETF draft draft-ietf-httpapi-ratelimit-headers-11 " +
            "writes it: `\"api-key\";q=600;w=60` is 600 requests per API key in a window of 60 seconds (the default; a key " +
            "may have its own). A window starts with the key's first request after the last one ended. Every request with a " +
            "valid, active key counts, whatever its answer, except a 429. On a 429 for an address's unknown keys, " +
            "`\"failed-keys\";q=20;w=60`: 20 unknown keys or wrong secrets per client address (the first X-Forwarded-For) " +
            "and window, after which every request from it is refused until the window ends.",
        },
        RateLimit: {
          required: true,
          schema: { type: "string", pattern: RATE_LIMIT_PATTERN },
          description: "What is left of that limit after this request: `\"api-key\";r=598;t=41` is 598 more requests in the " +
            "41 seconds until the window ends (draft-ietf-httpapi-ratelimit-headers-11).",
        },
      },
    },
  };
}
