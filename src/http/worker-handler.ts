import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { isDatabaseUnavailable, poisonsPool } from "../db/connection-loss.ts";
import type { RenewablePool, Sql } from "../db/pool.ts";
import type { RunMode } from "../queue/claims.ts";
import { json, readJson } from "./json.ts";
import { HttpError, problemResponse, unauthorized } from "./problem.ts";

// Compares in time that does not depend on where the strings differ.
function sameSecret(offered: string, expected: string): boolean {
  const a = Buffer.from(offered);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

// What a run is asked to do: without a body, or with `{}`, it takes the queue until it is
// empty now; `{"follow": true}` (the schedule's) takes jobs as they come until the run's
// budget is spent, so that the runs the schedule starts one after another leave no job
// waiting for the next.
const runRequest = z.strictObject({ follow: z.boolean().default(false) }).optional();

// A scheduled worker's function (notifications, webhooks): POST with the service credential
// runs one drain of its queue on the pool's current pool and answers what the run did;
// anything else is refused. A run the database failed under answers 503 (its jobs
// come back after their visibility timeout), and the pool is replaced.
export function createWorkerHandler<Summary>(
  options: { serviceKey: string; pool: RenewablePool; run: (sql: Sql, mode: RunMode) => Promise<Summary> },
) {
  return async (request: Request): Promise<Response> => {
    const offered = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    if (!sameSecret(offered, options.serviceKey)) {
      return problemResponse(unauthorized("The worker runs only with the service credential."));
    }
    if (request.method !== "POST") {
      return problemResponse(new HttpError("method-not-allowed", "Run the worker with POST.", { headers: { allow: "POST" } }));
    }
    let mode: RunMode;
    try {
      mode = { follow: (await readJson(request, runRequest))?.follow ?? false };
    } catch (error) {
      if (error instanceof HttpError) return problemResponse(error);
      throw error;
    }
    const sql = options.pool.current;
    try {
      return json(200, await options.run(sql, mode));
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (poisonsPool(error)) options.pool.renew(sql);
      return problemResponse(
        new HttpError("service-unavailable", "The database cannot be reached right now.", { headers: { "retry-after": "2" } }),
      );
    }
  };
}
