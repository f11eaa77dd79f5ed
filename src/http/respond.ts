import { json, jsonText } from "./json.ts";
import { HttpError } from "./problem.ts";

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// A strong validator of the representation itself: any change to what a client
// reads changes it, and nothing else does.
async function etagOfText(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return `"${base64url(digest.subarray(0, 18))}"`;
}

export function etagOf(resource: unknown): Promise<string> {
  return etagOfText(JSON.stringify(resource));
}

export async function representation(resource: unknown, status = 200, headers: Record<string, string> = {}) {
  const text = JSON.stringify(resource);
  return jsonText(status, text, { etag: await etagOfText(text), ...headers });
}

// RFC 7240: writes answer without a body unless the client asks for one, as PostgREST does.
export function wantsRepresentation(request: Request): boolean {
  const prefer = request.headers.get("prefer") ?? "";
  return prefer.split(/[,;]/).some((token) => token.trim().toLowerCase() === "return=representation");
}

export async function written(
  request: Request,
  resource: unknown,
  options: { created?: { location: string } } = {},
): Promise<Response> {
  const location: Record<string, string> = options.created ? { location: options.created.location } : {};
  if (wantsRepresentation(request)) {
    return await representation(resource, options.created ? 201 : 200, {
      "preference-applied": "return=representation",
      ...location,
    });
  }
  return new Response(null, {
    status: options.created ? 201 : 204,
    headers: { etag: await etagOf(resource), ...location },
  });
}

// If-Match names the representation the client last read; a write on top of a newer
// one would silently undo someone else's change.
export async function assertIfMatch(request: Request, current: unknown): Promise<void> {
  const header = request.headers.get("if-match");
  if (header === null || header.trim() === "*") return;
  const tag = await etagOf(current);
  // If-Match compares strongly (RFC 9110 13.1.1): a weak validator never matches.
  const offered = header.split(",").map((value) => value.trim());
  if (!offered.includes(tag)) {
    throw new HttpError("precondition-failed", "The resource changed since you read it. Read it again and retry.", {
      headers: { etag: tag },
    });
  }
}

export type Pagination = { limit: number; offset: number; total: number };

export function listResponse<T>(data: T[], pagination: Pagination): Response {
  return json(200, { data, pagination });
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
    await assertIfMatch(request, current);
  }
  const updated = await steps.update();
  if (updated === undefined) throw steps.notFound();
  return await written(request, updated);
}
