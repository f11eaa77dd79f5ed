import type { IdentityProvider } from "../auth/identity-provider.ts";
import type { Sql } from "../db/pool.ts";
import { json } from "../http/json.ts";
import { PROBLEM_CONTENT_TYPE } from "../http/problem.ts";
import type { Route } from "../http/router.ts";

type CheckState = "ok" | "unreachable";

async function databaseState(sql: Sql): Promise<CheckState> {
  try {
    await sql`select 1`;
    return "ok";
  } catch {
    return "unreachable";
  }
}

export function healthRoutes(deps: { sql: Sql; identity: IdentityProvider }): Route[] {
  return [{
    method: "GET",
    path: "/v1/health",
    handler: async () => {
      const [database, auth] = await Promise.all([
        databaseState(deps.sql),
        deps.identity.isReachable().then((ok): CheckState => ok ? "ok" : "unreachable"),
      ]);
      const checks = { database, auth };
      if (database === "ok" && auth === "ok") return json(200, { status: "ok", checks });
      return new Response(
        JSON.stringify({
          type: "urn:pms:problem:service-unavailable",
          title: "Service unavailable",
          status: 503,
          detail: "A dependency of the service is not reachable.",
          checks,
        }),
        { status: 503, headers: { "content-type": PROBLEM_CONTENT_TYPE, "retry-after": "5" } },
      );
    },
  }];
}
