import { type Kysely, sql, type Transaction } from "kysely";
import { type AccessClaims, type AccessTokenVerifier, bearerToken } from "../auth/access-token.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/database.types.ts";
import { HttpError, unauthorized } from "../http/problem.ts";

export type TenantRole = Database["public"]["Enums"]["tenant_role"];

export type Credentials = { claims: AccessClaims; accessToken: string };

export type Session = Credentials & { userId: string; db: Transaction<DB> };
export type TenantSession = Session & { tenantId: string; role: TenantRole };

export type RequestScope = {
  // Checks the token's signature and expiry; no database work.
  authenticate(request: Request): Promise<Credentials>;
  // One transaction: the RLS context, the session check, the membership, then `work`.
  run<T>(credentials: Credentials, tenantId: string | null, work: (session: Session, role: TenantRole | null) => Promise<T>): Promise<T>;
};

const UNDEFINED_TABLE = "42P01";

export function createRequestScope(deps: { db: Kysely<DB>; verify: AccessTokenVerifier }): RequestScope {
  return {
    async authenticate(request) {
      const accessToken = bearerToken(request);
      return { claims: await deps.verify(accessToken), accessToken };
    },

    async run(credentials, tenantId, work) {
      const { claims } = credentials;
      return await deps.db.transaction().execute(async (db) => {
        // The select list runs in order: the claims and role are in place before the
        // session and membership are read, and all of it costs one round trip.
        const { rows: [context] } = await sql<{ active: boolean; role: TenantRole | null }>`
          select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                 set_config('role', 'authenticated', true),
                 set_config('app.tenant_id', ${tenantId ?? ""}, true),
                 private.session_is_active(${claims.session_id}::uuid, ${claims.sub}::uuid) as active,
                 private.request_member_role() as role`.execute(db)
          .catch((error) => {
            // auth.sessions belongs to Supabase Auth's migrations; without it no session can be
            // checked. Only this statement: a table missing from a handler's query is a fault.
            if ((error as { code?: string }).code === UNDEFINED_TABLE) {
              throw new HttpError("service-unavailable", "Authentication is not available right now.");
            }
            throw error;
          });
        if (!context?.active) throw unauthorized("The session has ended. Sign in again.");
        return await work({ ...credentials, userId: claims.sub, db }, context.role);
      });
    },
  };
}
