import { createHash } from "node:crypto";
import type { Listed, Page, Scope } from "../db/pagination.ts";
import { json, jsonText } from "./json.ts";
import { countPreference, preferences } from "./prefer.ts";
import { HttpError } from "./problem.ts";

// A strong validator of the representation itself: any change to what a client
// reads changes it, and nothing else does. node:crypto hashes in place; Web Crypto's
// digest is an asynchronous operation that cost a request twenty times as much.
export function etagOfText(text: string): string {
  return `"${createHash("sha256").update(text).digest().subarray(0, 18).toString("base64url")}"`;
}

function etagOf(resource: unknown): string {
  return etagOfText(JSON.stringify(resource));
}

export function representation(resource: unknown, status = 200, headers: Record<string, string> = {}) {
  const text = JSON.stringify(resource);
  return jsonText(status, text, { etag: etagOfText(text), ...headers });
}

// RFC 7240: writes answer without a body unless the client asks for one, as PostgREST does.
// Other preferences, and other values of return, are ignored, as RFC 7240 requires.
export function wantsRepresentation(request: Request): boolean {
  return preferences(request).get("return") === "representation";
}

// A change answers 204 without a body, or 200 with the resource under Prefer:
// return=representation, as PostgREST does. A creation answers 201 with Location and the
// new resource's ETag, as HTTP has it: by default its body is the new resource's id, as
// apaleo's and Stripe's creates answer, so a generated client's create returns what it
// made; under return=representation the resource itself; with `emptyByDefault`, the
// contract's routes whose answer is documented empty, nothing unless it is asked for.
// `location` names the resource of a change that may also have been a creation (a
// registration that refreshed an existing one), so that both answers carry it.
export function written(
  request: Request,
  resource: unknown,
  options: { created?: { location: string; emptyByDefault?: boolean; idField?: string }; location?: string } = {},
): Response {
  const at = options.created?.location ?? options.location;
  const location: Record<string, string> = at === undefined ? {} : { location: at };
  if (wantsRepresentation(request)) {
    return representation(resource, options.created ? 201 : 200, {
      "preference-applied": "return=representation",
      ...location,
    });
  }
  const headers = { etag: etagOf(resource), ...location };
  if (!options.created) return new Response(null, { status: 204, headers });
  if (options.created.emptyByDefault) return new Response(null, { status: 201, headers });
  const idField = options.created.idField ?? "id";
  return json(201, { [idField]: (resource as Record<string, unknown> | null)?.[idField] }, headers);
}

// If-Match names the representation the client last read; a write on top of a newer
// one would silently undo someone else's change.
function assertIfMatch(request: Request, current: unknown): void {
  const header = request.headers.get("if-match");
  if (header === null || header.trim() === "*") return;
  const tag = etagOf(current);
  // If-Match compares strongly (RFC 9110 13.1.1): a weak validator never matches.
  const offered = header.split(",").map((value) => value.trim());
  if (!offered.includes(tag)) {
    throw new HttpError("stale-etag", "The resource changed since you read it. Read it again and retry.", {
      headers: { etag: tag },
    });
  }
}

// The page a list request asks for: its limit and offset (from its query), the count it
// prefers (Prefer: count=..., none stated is exact) and the scope an estimate is made in.
export function pageFor(request: Request, query: { limit: number; offset: number }, scope?: Scope): Page {
  const count = countPreference(request);
  return { limit: query.limit, offset: query.offset, ...(count ? { count } : {}), ...(scope ? { scope } : {}) };
}

// A page of a list. Preference-Applied names the count the request preferred when the
// list counted that way (RFC 7240); a list that counted otherwise (exactly) says nothing.
export function listResponse<T>(page: Page, { data, pagination, counted }: Listed<T>): Response {
  const applied: Record<string, string> = page.count === counted ? { "preference-applied": `count=${counted}` } : {};
  return json(200, { data, pagination }, applied);
}

// A Location the client resolves against the URL it called, so it holds behind any
// gateway prefix (/functions/v1/api locally, the project URL when hosted).
export function locationOf(request: Request, apiPath: string): string {
  const path = new URL(request.url).pathname;
  const depth = path.slice(path.indexOf("/v1/") + 4).split("/").filter(Boolean).length;
  return `${"../".repeat(Math.max(depth - 1, 0))}${apiPath.replace(/^\/?v1\//, "")}`;
}

// PATCH with optional If-Match: the row is read under lock only when the client sent
// a validator to compare, so a plain PATCH (or If-Match: *, which any row matches and
// whose missing row the UPDATE reports) is a single UPDATE.
export async function conditionalUpdate<T>(
  request: Request,
  steps: { lock: () => Promise<T | undefined>; update: () => Promise<T | undefined>; notFound: () => Error },
): Promise<Response> {
  const ifMatch = request.headers.get("if-match");
  if (ifMatch !== null && ifMatch.trim() !== "*") {
    const current = await steps.lock();
    if (current === undefined) throw steps.notFound();
    assertIfMatch(request, current);
  }
  const updated = await steps.update();
  if (updated === undefined) throw steps.notFound();
  return written(request, updated);
}
