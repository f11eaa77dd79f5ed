import { z } from "zod";
import { type FieldError, HttpError } from "./problem.ts";
import { isDomainRuleIssue } from "./schemas.ts";

// Bodies above this are refused before parsing: no request of this API needs more.
export const MAX_BODY_BYTES = 64 * 1024;

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return jsonText(status, JSON.stringify(body), headers);
}

// A body already serialized, for a caller that needs the text itself (to hash it, or to keep it).
export function jsonText(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers });
}

async function readCapped(request: Request): Promise<string> {
  return new TextDecoder().decode(await readBytes(request, MAX_BODY_BYTES));
}

// The body's bytes as sent, refused with 413 past `maxBytes` (declared or counted) without
// reading further: what a signature is computed over.
export async function readBytes(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError("payload-too-large", `Request bodies are limited to ${maxBytes} bytes.`);
}

// One error per field; an unknown key is named as the field it would be.
export function fieldErrors(error: z.ZodError, root = "(body)"): FieldError[] {
  return error.issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      const kind = root === "(query)" ? "query parameter" : "field";
      return issue.keys.map((key) => ({ path: [...at, key].join("."), message: `Unknown ${kind} ${key}.` }));
    }
    return [{ path: at.join(".") || root, message: issue.message }];
  });
}

// Postgres text cannot hold U+0000, so no field of this API can: refused here, by
// name, rather than by the database as a fault.
export function refuseNul(value: unknown, what: string): void {
  const found = nulPath(value, []);
  if (found !== null) {
    throw new HttpError("validation", `${what} contain the NUL character (U+0000), which no field accepts.`, {
      errors: [{ path: found.join(".") || "(body)", message: "Contains U+0000." }],
    });
  }
}

function nulPath(value: unknown, at: string[]): string[] | null {
  if (typeof value === "string") return value.includes("\0") ? at : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = nulPath(item, [...at, String(index)]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes("\0")) return [...at, key];
      const found = nulPath(item, [...at, key]);
      if (found) return found;
    }
  }
  return null;
}

// Reads a JSON body and validates it; every way it can be wrong is a 4xx problem.
export async function readJson<Schema extends z.ZodType>(
  request: Request,
  schema: Schema,
): Promise<z.infer<Schema>> {
  const contentType = request.headers.get("content-type");
  const text = await readCapped(request);
  if (text.length > 0 || contentType !== null) {
    const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
    if (mediaType !== "application/json") {
      throw new HttpError("unsupported-media-type", "Send the body as application/json.");
    }
  }
  let value: unknown = undefined;
  if (text.trim().length > 0) {
    try {
      value = JSON.parse(text);
    } catch {
      throw new HttpError("malformed-json", "The request body is not valid JSON.");
    }
  }
  refuseNul(value, "The request body's values");
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const errors = fieldErrors(parsed.error);
    // Only a body that matches the document and breaks a rule between its fields is a 422.
    if (parsed.error.issues.every(isDomainRuleIssue)) {
      throw new HttpError("unprocessable", parsed.error.issues.map((issue) => issue.message).join(" "), { errors });
    }
    throw new HttpError("validation", "The request body does not match the expected shape.", { errors });
  }
  return parsed.data;
}
