import type { Sql, Transaction } from "../db/pool.ts";
import { HttpError, unauthorized } from "../http/problem.ts";
import { type AccessClaims, type AccessTokenVerifier, bearerToken } from "./access-token.ts";

export type SessionContext = { claims: AccessClaims; accessToken: string; tx: Transaction };

export type SessionGuard = <T>(request: Request, work: (context: SessionContext) => Promise<T>) => Promise<T>;

const UNDEFINED_TABLE = "42P01";

// Verifies the token, then in one transaction: sets the RLS context, becomes
// `authenticated`, confirms the token's session still exists (so a signed-out
// token stops working at once), and runs the request's queries.
export function createSessionGuard(deps: { sql: Sql; verify: AccessTokenVerifier }): SessionGuard {
  return async <T>(request: Request, work: (context: SessionContext) => Promise<T>): Promise<T> => {
    const accessToken = bearerToken(request);
    const claims = await deps.verify(accessToken);
    try {
      // postgres.js types begin() as unwrapping arrays of promises; work returns a plain value.
      return await deps.sql.begin(async (tx) => {
        const [row] = await tx<{ active: boolean }[]>`
          select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                 set_config('role', 'authenticated', true),
                 private.session_is_active(${claims.session_id}::uuid, ${claims.sub}::uuid) as active`;
        if (!row?.active) throw unauthorized("The session has ended. Sign in again.");
        return await work({ claims, accessToken, tx });
      }) as T;
    } catch (error) {
      // auth.sessions is created by Supabase Auth's own migrations.
      if ((error as { code?: string }).code === UNDEFINED_TABLE) {
        throw new HttpError("service-unavailable", "Authentication is not available right now.");
      }
      throw error;
    }
  };
}
