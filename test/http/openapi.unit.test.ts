// The OpenAPI document as the app builds it from its endpoint list (the one GET
// /v1/openapi.json serves, built here in-process): whole, every reference resolving, and
// each operation's documented problems following from what the operation takes.
import assert from "node:assert/strict";
import { apiDocument } from "../support/api-document.ts";

type Operation = {
  operationId: string;
  parameters?: { $ref?: string; name?: string; in?: string }[];
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
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
    const problem = operation.responses["400"]?.content?.["application/problem+json"]?.schema;
    assert.deepEqual(problem, { $ref: "#/components/schemas/Problem" }, where);
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

Deno.test("integrations send an API key and no tenant; members name the tenant in x-tenant-id or the path", async () => {
  await eachOperation((where, template, operation) => {
    const access = operation["x-access"];
    const tenantHeader = has(operation, "#/components/parameters/TenantId");
    if (access === "integration") {
      assert.deepEqual(operation.security, [{ apiKeyBearer: [] }, { apiKeyHeader: [] }], where);
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
});
