import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import { isDatabaseUnavailable, poisonsPool } from "../db/connection-loss.ts";
import type { RenewablePool, Sql } from "../db/pool.ts";
import { json } from "./json.ts";
import { HttpError, problemResponse, unauthorized } from "./problem.ts";

// Compares in time that does not depend on where the strings differ.
function sameSecret(offered: string, expected: string): boolean {
  const a = Buffer.from(offered);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

// A scheduled worker's function (notifications, webhooks): POST with the service credential
// runs one drain of its queue on the pool's current pool and answers what the run did;
// anything else is refused. A run the database failed under answers 503 (its jobs
// come back after their visibility timeout), and the pool is replaced.
export function createWorkerHandler<Summary>(
  options: { serviceKey: string; pool: RenewablePool; run: (sql: Sql) => Promise<Summary> },
) {
  return async (request: Request): Promise<Response> => {
    const offered = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    if (!sameSecret(offered, options.serviceKey)) {
      return problemResponse(unauthorized("The worker runs only with the service credential."));
    }
    if (request.method !== "POST") {
      return problemResponse(new HttpError("method-not-allowed", "Run the worker with POST.", { headers: { allow: "POST" } }));
    }
    const sql = options.pool.current;
    try {
      return json(200, await options.run(sql));
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (poisonsPool(error)) options.pool.renew(sql);
      return problemResponse(
        new HttpError("service-unavailable", "The database cannot be reached right now.", { headers: { "retry-after": "2" } }),
      );
    }
  };
}
