// Responses checked against the OpenAPI document the API serves: the status must be
// documented for the operation, the content type must be the documented one, and the
// JSON body must match the documented schema (with components.schemas as $defs,
// converted by zod 4's z.fromJSONSchema). The document is built in this process by the
// app the api function runs (./api-document.ts), so checking needs no stack;
// test/docs/openapi.test.ts proves the stack serves that very document.
import { z } from "zod";
import { rewriteRefs } from "../../src/http/openapi.ts";
import { apiDocument } from "./api-document.ts";

type JsonSchema = Record<string, unknown>;
type MediaType = { schema?: JsonSchema };
type ResponseDoc = {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
  // The problem types this status answers on the operation.
  "x-problem-types"?: string[];
  // The body under Prefer: return=representation, of an answer otherwise empty.
  "x-prefer-representation"?: Record<string, MediaType>;
};
type Operation = {
  operationId: string;
  parameters?: JsonSchema[];
  responses: Record<string, ResponseDoc>;
};
// The document's own shape, as far as the checks read it (its generated type says only
// that it is a JSON object).
export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema>; headers?: Record<string, HeaderDoc> };
};
type HeaderDoc = { required?: boolean; schema?: { enum?: string[]; pattern?: string } };

// Built once per test process.
export const openApiDocument = apiDocument;

// A documented schema as one self-contained JSON Schema, components as $defs.
export function standaloneSchema(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  return {
    ...(rewriteRefs(schema, "#/components/schemas/", "#/$defs/") as JsonSchema),
    $defs: rewriteRefs(document.components.schemas, "#/components/schemas/", "#/$defs/") as Record<string, JsonSchema>,
  };
}

const compiled = new Map<string, z.ZodType>();

function validatorFor(document: OpenApiDocument, key: string, schema: JsonSchema): z.ZodType {
  let validator = compiled.get(key);
  if (!validator) {
    validator = z.fromJSONSchema(standaloneSchema(document, schema) as Parameters<typeof z.fromJSONSchema>[0]);
    compiled.set(key, validator);
  }
  return validator;
}

function mediaTypeOf(response: Response): string | null {
  const header = response.headers.get("content-type");
  return header === null ? null : header.split(";")[0]!.trim().toLowerCase();
}

// return=minimal: an operation that takes Prefer answers its writes without a body
// unless asked for the representation (the document's info says so; the status's
// documented content describes the representation).
function acceptsPrefer(operation: Operation): boolean {
  return (operation.parameters ?? []).some((parameter) => parameter.$ref === "#/components/parameters/Prefer");
}

export class ContractViolation extends Error {
  override name = "ContractViolation";
}

/**
 * Checks `response` against the served contract of `method pathTemplate` and returns
 * its parsed JSON body (undefined when it has none). Reads a clone, so the caller can
 * still read the response.
 */
export async function assertMatchesContract(method: string, pathTemplate: string, response: Response): Promise<unknown> {
  const document = await openApiDocument();
  const text = await response.clone().text();
  const where = `${method.toUpperCase()} ${pathTemplate} -> ${response.status}`;
  const fail = (message: string): never => {
    throw new ContractViolation(`${where}: ${message}\nbody: ${text.slice(0, 2000)}`);
  };

  const operation = document.paths[pathTemplate]?.[method.toLowerCase()];
  if (!operation) return fail("the document has no such operation");
  const documented = operation.responses[String(response.status)];
  if (!documented) {
    return fail(`status ${response.status} is not documented (documented: ${Object.keys(operation.responses).join(", ")})`);
  }

  // A header the document requires must be there; any documented header that is there
  // must hold a value its schema allows.
  for (const [header, doc] of Object.entries(documented.headers ?? {})) {
    const ref = (doc as { $ref?: string }).$ref;
    const { required = false, schema = {} } = (ref ? document.components.headers?.[ref.split("/").at(-1)!] : doc) as HeaderDoc ?? {};
    const value = response.headers.get(header);
    if (value === null) {
      if (required) fail(`the documented ${header} header is missing`);
      continue;
    }
    if (schema.enum && !schema.enum.includes(value)) fail(`${header}: ${value} is none of ${schema.enum.join(", ")}`);
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) fail(`${header}: ${value} does not match ${schema.pattern}`);
  }

  const mediaType = mediaTypeOf(response);
  const representation = documented["x-prefer-representation"];
  // Empty by default; the representation when the client asked for it.
  const content = (text.length > 0 && representation ? representation : documented.content) ?? {};
  const documentedTypes = Object.keys(content);

  if (documentedTypes.length === 0) {
    if (mediaType !== null) fail(`expected no content, got content-type ${mediaType}`);
    if (text.length > 0) fail("expected an empty body");
    return undefined;
  }

  if (mediaType === null && text.length === 0 && acceptsPrefer(operation) && response.status < 300) {
    return undefined; // return=minimal
  }
  if (mediaType === null) return fail(`expected content-type ${documentedTypes.join(" or ")}, got none`);
  const media = content[mediaType];
  if (!media) return fail(`expected content-type ${documentedTypes.join(" or ")}, got ${mediaType}`);
  if (!mediaType.endsWith("json")) return text;

  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return fail("the body is not JSON");
  }
  const problemTypes = documented["x-problem-types"];
  if (problemTypes) {
    const type = (body as { type?: unknown } | null)?.type;
    if (typeof type !== "string" || !problemTypes.includes(type)) {
      fail(`the problem type ${String(type)} is not one the document lists for this status (${problemTypes.join(", ")})`);
    }
  }
  if (media.schema) {
    const parsed = validatorFor(document, `${where} ${mediaType}${content === representation ? " representation" : ""}`, media.schema).safeParse(body);
    if (!parsed.success) {
      fail(`the body does not match the documented schema:\n${
        parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(body)"}: ${issue.message}`).join("\n")
      }`);
    }
  }
  return body;
}
