import type { AccessTokenVerifier } from "./auth/access-token.ts";
import { authRoutes } from "./auth/handlers.ts";
import type { IdentityProvider } from "./auth/identity-provider.ts";
import { createSessionGuard } from "./auth/session-guard.ts";
import type { Sql } from "./db/pool.ts";
import { healthRoutes } from "./health/handlers.ts";
import { createRouter, type Logger } from "./http/router.ts";

export type ApiDependencies = {
  sql: Sql;
  identity: IdentityProvider;
  verifyAccessToken: AccessTokenVerifier;
  logger: Logger;
};

// The `api` function: every /v1 route, as one Request -> Response handler.
export function createApi(deps: ApiDependencies): (request: Request) => Promise<Response> {
  const withSession = createSessionGuard({ sql: deps.sql, verify: deps.verifyAccessToken });
  return createRouter({
    functionName: "api",
    logger: deps.logger,
    routes: [
      ...healthRoutes(deps),
      ...authRoutes({ identity: deps.identity, withSession }),
    ],
  });
}
