// The document says exactly what the server accepts and answers, so a client (or a
// fuzzer) that follows it is never surprised: where JSON Schema can state a rule the
// server checks, the document states that very rule.
import assert from "node:assert/strict";
import { z } from "zod";
import { createReservationBody } from "../../src/reservations/schema.ts";
import { readJson } from "../../src/http/json.ts";
import { HttpError } from "../../src/http/problem.ts";
import { emailPattern, oneOrMany, patchOf } from "../../src/http/schemas.ts";
import { idempotencyKeyOf } from "../../src/external/idempotency.ts";
import { apiDocument } from "../support/api-document.ts";

type Schema = Record<string, unknown>;
type Parameter = { name?: string; in?: string; schema?: Schema; $ref?: string };
type Operation = {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { content?: Record<string, unknown>; headers?: Record<string, unknown>; "x-prefer-representation"?: Record<string, unknown> }
  >;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema>; parameters: Record<string, Parameter> } };

const doc = async () => await apiDocument() as unknown as Document;

function resolve(document: Document, schema: Schema): Schema {
  const ref = schema.$ref;
  return typeof ref === "string" ? document.components.schemas[ref.split("/").at(-1)!]! : schema;
}

// Every string schema under `schema`, with where it is.
function strings(document: Document, schema: Schema, at: string, seen = new Set<Schema>()): [string, Schema][] {
  const resolved = resolve(document, schema);
  if (seen.has(resolved)) return [];
  seen.add(resolved);
  const found: [string, Schema][] = [];
  const types = Array.isArray(resolved.type) ? resolved.type : [resolved.type];
  if (types.includes("string")) found.push([at, resolved]);
  for (const [key, value] of Object.entries(resolved)) {
    if (key === "properties") {
      for (const [name, property] of Object.entries(value as Record<string, Schema>)) found.push(...strings(document, property, `${at}.${name}`, seen));
    } else if (["items", "additionalProperties"].includes(key) && value && typeof value === "object") {
      found.push(...strings(document, value as Schema, `${at}[]`, seen));
    } else if (["anyOf", "oneOf", "allOf"].includes(key)) {
      for (const option of value as Schema[]) found.push(...strings(document, option, at, seen));
    }
  }
  return found;
}

async function requestStrings(): Promise<[string, Schema][]> {
  const document = await doc();
  const found: [string, Schema][] = [];
  for (const [path, byMethod] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(byMethod)) {
      const where = `${method.toUpperCase()} ${path}`;
      const body = operation.requestBody?.content["application/json"]?.schema;
      if (body) found.push(...strings(document, body, `${where} body`));
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === "query" && parameter.schema) found.push(...strings(document, parameter.schema, `${where} ?${parameter.name}`));
      }
    }
  }
  return found;
}

Deno.test("every free string a request may carry refuses U+0000 by its pattern, as the server does", async () => {
  const open = (await requestStrings()).filter(([, schema]) => {
    if (Array.isArray(schema.enum) || "const" in schema) return false;
    const patterns = [schema.pattern, ...((schema.allOf as Schema[] | undefined) ?? []).map((part) => part.pattern)]
      .filter((pattern): pattern is string => typeof pattern === "string");
    return !patterns.some((pattern) => !new RegExp(pattern, "u").test("a\u0000b") || !new RegExp(pattern, "u").test("\u0000"));
  });
  assert.deepEqual(open.map(([where]) => where), []);
});

Deno.test("email fields carry the server's own pattern, never JSON Schema's email format", async () => {
  const emails = (await requestStrings()).filter(([where]) => /email/i.test(where.split(" ").at(-1)!));
  assert.ok(emails.length >= 4, `email fields: ${emails.map(([where]) => where)}`);
  for (const [where, schema] of emails) {
    assert.equal(schema.format, undefined, `${where} has format ${schema.format}`);
    assert.equal(schema.pattern, emailPattern.source, where);
  }
});

Deno.test("every PATCH body asks for at least one property, as the server does", async () => {
  const document = await doc();
  for (const [path, byMethod] of Object.entries(document.paths)) {
    const body = byMethod.patch?.requestBody?.content["application/json"]?.schema;
    if (!body) continue;
    const schema = resolve(document, body);
    assert.ok(schema.minProperties === 1 || (Array.isArray(schema.required) && schema.required.length > 0), `PATCH ${path}`);
  }
  const empty = new Request("http://x/", { method: "PATCH", body: "{}", headers: { "content-type": "application/json" } });
  await assert.rejects(readJson(empty, patchOf({ a: z.string() })));
});

Deno.test("a comma-separated filter's pattern accepts exactly what the server parses", () => {
  const filter = oneOrMany(["open", "in_progress", "done"] as const);
  const pattern = new RegExp((z.toJSONSchema(filter, { io: "input" }) as Schema).pattern as string, "u");
  for (const value of ["open", "open,done", " open , in_progress ", "", ",", "open,", "OPEN", "open,,done", "opened", "open;done"]) {
    assert.equal(pattern.test(value), filter.safeParse(value).success, JSON.stringify(value));
  }
  assert.deepEqual(filter.parse(" open , done"), ["open", "done"]);
});

Deno.test("Idempotency-Key: the document's pattern is the rule the server applies", async () => {
  const document = await doc();
  const pattern = new RegExp(document.components.parameters.IdempotencyKey!.schema!.pattern as string, "u");
  for (const key of ["a", "x".repeat(255), "x".repeat(256), "with space", "\u00e9", "a\tb", "~!{}"]) {
    const request = new Request("http://x/", { headers: { "idempotency-key": key } });
    let accepted = true;
    try {
      idempotencyKeyOf(request);
    } catch (error) {
      assert.ok(error instanceof HttpError);
      accepted = false;
    }
    assert.equal(pattern.test(key), accepted, JSON.stringify(key));
  }
});

Deno.test("a body that matches the schema but breaks a rule between its fields is a 422, one that does not match a 400", async () => {
  const post = (body: unknown) => new Request("http://x/", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const stay = { propertyId: crypto.randomUUID(), guestId: crypto.randomUUID(), checkIn: "2027-05-03", checkOut: "2027-05-01" };
  const refused = await readJson(post(stay), createReservationBody).catch((error: unknown) => error);
  assert.ok(refused instanceof HttpError);
  assert.equal(refused.status, 422);
  assert.equal(refused.kind, "unprocessable");
  assert.deepEqual(refused.extra.errors?.map((error) => error.path), ["checkOut"]);
  const malformed = await readJson(post({ ...stay, checkIn: "May 3rd" }), createReservationBody).catch((error: unknown) => error);
  assert.ok(malformed instanceof HttpError);
  assert.equal(malformed.status, 400);
});

Deno.test("creates answer 201 with Location, never 204; a 204 has no body; a 200 and a 201 say what body comes", async () => {
  const document = await doc();
  let creates = 0;
  for (const [path, byMethod] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(byMethod)) {
      const located = (status: string) => operation.responses[status]?.headers?.Location !== undefined;
      for (const [status, response] of Object.entries(operation.responses)) {
        const where = `${method} ${path} ${status}`;
        if (status === "204") {
          assert.equal(response.content, undefined, where);
          // A 204 with Location is a creation answered without its status.
          if (located("204")) assert.ok(located("201"), `${where}: a creation's Location belongs to its 201`);
        }
        if (status === "200") assert.ok(response.content, `${where} has no body`);
        if (status === "201") {
          creates++;
          // The contract's routes documented empty keep their body empty by default and
          // say the representation apart; every other create documents its body.
          assert.ok(response.content || response["x-prefer-representation"], `${where} says nothing of its body`);
          assert.ok(located("201"), `${where}: Location`);
        }
      }
    }
  }
  assert.ok(creates >= 10, `${creates} creates`);
});
