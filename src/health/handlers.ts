import { z } from "zod";
import type { IdentityProvider } from "../auth/identity-provider.ts";
import { poisonsPool } from "../db/connection-loss.ts";
import type { RenewablePool } from "../db/pool.ts";
import { type Endpoint, publicEndpoint } from "../http/endpoint.ts";
import { json } from "../http/json.ts";
import { PROBLEM_CONTENT_TYPE, problemTypeUri } from "../http/problem.ts";

type CheckState = "ok" | "unreachable";

const checks = z.object({ database: z.enum(["ok", "unreachable"]), auth: z.enum(["ok", "unreachable"]) });

async function databaseState(pool: RenewablePool): Promise<CheckState> {
  const sql = pool.current;
  try {
    await sql`select 1`;
    return "ok";
  } catch (error) {
    if (poisonsPool(error)) pool.renew(sql);
    return "unreachable";
  }
}

export function healthEndpoints(deps: { pool: RenewablePool; identity: IdentityProvider }): Endpoint[] {
  return [publicEndpoint({
    method: "GET", path: "/v1/health", operationId: "health", tag: "Service",
    summary: "Whether the database and Supabase Auth are reachable.",
    success: [
      { status: 200, description: "Everything is reachable.", schema: z.object({ status: z.literal("ok"), checks }) },
      {
        status: 503, description: "A dependency is unreachable; `checks` says which.",
        contentType: PROBLEM_CONTENT_TYPE,
        schema: z.object({
          type: z.literal(problemTypeUri("service-unavailable")), title: z.string(), status: z.literal(503), detail: z.string(), checks,
        }),
      },
    ],
  }, async () => {
    const [database, auth] = await Promise.all([
      databaseState(deps.pool),
      deps.identity.isReachable().then((ok): CheckState => ok ? "ok" : "unreachable"),
    ]);
    const state = { database, auth };
    if (database === "ok" && auth === "ok") return json(200, { status: "ok", checks: state });
    return new Response(
      JSON.stringify({
        type: problemTypeUri("service-unavailable"),
        title: "Service unavailable",
        status: 503,
        detail: "A dependency of the service is not reachable.",
        checks: state,
      }),
      { status: 503, headers: { "content-type": PROBLEM_CONTENT_TYPE, "retry-after": "5" } },
    );
  })];
}
