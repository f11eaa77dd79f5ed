// The OpenAPI document as the app builds it from its endpoint list (the one GET
// /v1/openapi.json serves, built here in-process): whole, every reference resolving, and
// each operation's documented problems following from what the operation takes.
import assert from "node:assert/strict";
import { problemTypes } from "../../src/http/problem.ts";
import { apiDocument } from "../support/api-document.ts";

// A problem response's body: the Problem schema (its types listed in the response's
// x-problem-types), or a route's own shape that names its one type.
type ResponseSchema = {
  $ref?: string;
  properties?: { type?: { const?: string } };
};
type Operation = {
  operationId: string;
  parameters?: { $ref?: string; name?: string; in?: string }[];
  requestBody?: unknown;
  responses: Record<
    string,
    { content?: Record<string, { schema?: ResponseSchema }>; headers?: Record<string, unknown>; "x-problem-types"?: string[] }
  >;
  security: Record<string, string[]>[];
  "x-access": string;
};
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
};

async function document(): Promise<Document> {
  return await apiDocument() as unknown as Document;
}

async function eachOperation(check: (where: string, template: string, operation: Operation) => void) {
  const doc = await document();
  for (const [template, byMethod] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(byMethod)) check(`${method.toUpperCase()} ${template}`, template, operation);
  }
}

const has = (operation: Operation, ref: string) => (operation.parameters ?? []).some((parameter) => parameter.$ref === ref);

Deno.test("the document is OpenAPI 3.1, every route is under /v1, and every operationId is its own", async () => {
  const doc = await document();
  assert.equal(doc.openapi, "3.1.0");
  const ids = new Set<string>();
  await eachOperation((where, template, operation) => {
    assert.match(template, /^\/v1\//, where);
    assert.ok(!ids.has(operation.operationId), `${where}: ${operation.operationId} is taken`);
    ids.add(operation.operationId);
  });
  assert.ok(ids.size >= 65, `${ids.size} operations`);
});

Deno.test("every $ref points at a component the document has", async () => {
  const doc = await document();
  const refs: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") {
      for (const [key, field] of Object.entries(value)) {
        if (key === "$ref" && typeof field === "string") refs.push(field);
        else walk(field);
      }
    }
  };
  walk(doc);
  assert.ok(refs.length > 100, `${refs.length} references`);
  for (const ref of new Set(refs)) {
    const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
    assert.ok(section && name && doc.components[section]?.[name], `${ref} resolves`);
  }
});

Deno.test("every operation documents 400 as a problem; every one that needs credentials 401", async () => {
  await eachOperation((where, _template, operation) => {
    const problem = operation.responses["400"];
    assert.equal(problem?.content?.["application/problem+json"]?.schema?.$ref, "#/components/schemas/Problem", where);
    assert.ok(problem?.["x-problem-types"]?.includes("urn:pms:problem:validation"), where);
    // A public one may too, for its own reasons (sign-in's wrong password).
    if (operation["x-access"] !== "public") assert.ok("401" in operation.responses, `${where}: 401`);
  });
});

Deno.test("what an operation takes decides its problems: a body 413 and 415, If-Match 412, Idempotency-Key 409", async () => {
  await eachOperation((where, _template, operation) => {
    if (operation.requestBody) {
      for (const status of ["413", "415"]) assert.ok(status in operation.responses, `${where}: ${status}`);
    }
    if (has(operation, "#/components/parameters/IfMatch")) assert.ok("412" in operation.responses, `${where}: 412`);
    if (has(operation, "#/components/parameters/IdempotencyKey")) assert.ok("409" in operation.responses, `${where}: 409`);
  });
});

Deno.test("integrations send an API key and no tenant; providers a signature and no tenant; members name the tenant in x-tenant-id or the path", async () => {
  const signatures = new Set<string>();
  await eachOperation((where, template, operation) => {
    const access = operation["x-access"];
    const tenantHeader = has(operation, "#/components/parameters/TenantId");
    if (access === "webhook") {
      assert.equal(operation.security.length, 1, where);
      const [scheme] = Object.keys(operation.security[0]!);
      assert.ok(scheme === "sendGridSignature" || scheme === "smsSignature", `${where}: ${scheme}`);
      signatures.add(scheme);
      assert.ok(template.startsWith("/v1/webhooks/"), where);
      assert.equal(tenantHeader, false, where);
      assert.ok("401" in operation.responses, `${where}: 401`);
    } else if (access === "integration") {
      // The one scope the route needs, the same under either way of sending the key; a
      // key without it gets the 403.
      const scopes = operation.security.map((requirement: Record<string, string[]>) => Object.values(requirement)[0]);
      assert.deepEqual(operation.security.map((requirement: Record<string, string[]>) => Object.keys(requirement)[0]),
        ["apiKeyBearer", "apiKeyHeader"], where);
      assert.equal(scopes[0]?.length, 1, `${where}: one scope`);
      assert.deepEqual(scopes[1], scopes[0], where);
      assert.ok("403" in operation.responses, `${where}: 403`);
      assert.ok(template.startsWith("/v1/external/"), where);
      assert.equal(tenantHeader, false, where);
    } else if (access === "public") {
      assert.deepEqual(operation.security, [], where);
    } else {
      assert.deepEqual(operation.security, [{ bearerAuth: [] }], where);
      const inPath = template.startsWith("/v1/tenants/{tenantId}");
      const member = access === "member" || access === "manager";
      assert.equal(tenantHeader, member && !inPath, where);
      if (member) assert.ok("403" in operation.responses, `${where}: 403`);
    }
  });
  assert.deepEqual([...signatures].sort(), ["sendGridSignature", "smsSignature"], "both providers' webhooks are documented");
});

Deno.test("every problem type is in the document with its status; each operation's problems are types of its status", async () => {
  const doc = await document();
  const listed = (doc.components.schemas!.ProblemType as { oneOf: { const: string; "x-status": number }[] }).oneOf;
  assert.deepEqual(
    listed.map((type) => [type.const, type["x-status"]]),
    Object.entries(problemTypes).map(([kind, { status }]) => [`urn:pms:problem:${kind}`, status]),
  );
  const statusOf = new Map(listed.map((type) => [type.const, type["x-status"]]));
  await eachOperation((where, _template, operation) => {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (Number(status) < 400) continue;
      const schema = response.content?.["application/problem+json"]?.schema;
      // A problem of the route's own shape (health's 503) names its one type itself.
      const own = schema?.properties?.type?.const;
      const types = response["x-problem-types"] ?? (own ? [own] : undefined);
      // The one Problem schema, which generated clients type, whatever the types.
      if (!own) assert.equal(schema?.$ref, "#/components/schemas/Problem", `${where} ${status}`);
      assert.ok(types && types.length > 0, `${where} ${status}: names its problem types`);
      for (const type of types) assert.equal(statusOf.get(type), Number(status), `${where} ${status}: ${type}`);
    }
  });
  // The specific types are where a client meets them.
  const conflicts = (path: string, method: string) =>
    doc.paths[path]?.[method]?.responses["409"]?.["x-problem-types"] ?? [];
  assert.ok(conflicts("/v1/reservations", "post").includes("urn:pms:problem:unit-already-booked"));
  assert.ok(conflicts("/v1/units/{id}", "delete").includes("urn:pms:problem:still-referenced"));
  assert.ok(conflicts("/v1/external/reservations/{id}/payments", "post").includes("urn:pms:problem:idempotency-key-in-progress"));
  assert.ok((doc.paths["/v1/external/reservations/{id}/payments"]?.post?.responses["422"]?.["x-problem-types"] ?? [])
    .includes("urn:pms:problem:idempotency-key-reused"));
});

Deno.test("every list takes Prefer: count= and its page documents Preference-Applied; nothing else does", async () => {
  let lists = 0;
  await eachOperation((where, _template, operation) => {
    const page = operation.responses["200"];
    const schema = page?.content?.["application/json"]?.schema as { properties?: Record<string, { $ref?: string }> } | undefined;
    const isList = schema?.properties?.pagination?.$ref === "#/components/schemas/Pagination";
    if (isList) lists++;
    assert.equal(has(operation, "#/components/parameters/PreferCount"), isList, `${where}: Prefer: count=`);
    assert.equal(page?.headers?.["Preference-Applied"] !== undefined, isList, `${where}: Preference-Applied`);
  });
  assert.ok(lists >= 19, `${lists} lists`);
});
