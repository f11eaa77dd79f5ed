import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import { json } from "../http/json.ts";
import { HttpError, problemResponse, unauthorized } from "../http/problem.ts";
import type { RunSummary } from "./worker.ts";

// Compares in time that does not depend on where the strings differ.
function sameSecret(offered: string, expected: string): boolean {
  const a = Buffer.from(offered);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

// POST with the service credential runs one drain of the queue; anything else is refused.
export function createWorkerHandler(options: { serviceKey: string; run: () => Promise<RunSummary> }) {
  return async (request: Request): Promise<Response> => {
    const offered = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    if (!sameSecret(offered, options.serviceKey)) {
      return problemResponse(unauthorized("The worker runs only with the service credential."));
    }
    if (request.method !== "POST") {
      return problemResponse(new HttpError("method-not-allowed", "Run the worker with POST.", { headers: { allow: "POST" } }));
    }
    return json(200, await options.run());
  };
}
