import { type Kysely, sql, type Transaction } from "kysely";
import { type AccessTokenVerifier, bearerToken } from "../auth/access-token.ts";
import { compileOnce } from "../db/compile-once.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/database.types.ts";
import { eachStatementAfter, runPrelude } from "../db/pipelined-transactions.ts";
import type { Reads } from "../db/reads.ts";
import { unauthorized } from "../http/problem.ts";
import type { AccessClaims, Credentials, RequestScope, Session, TenantRole } from "../http/request-scope.ts";

type Context = { active: boolean; role: TenantRole | null };

// The claims and role are set before the session and membership are read (the select
// list runs in order), all in one statement, compiled once: every request sends it. The
// role's statement_timeout applies to the request's statements after this one.
const contextQuery = compileOnce((db, claims: string, tenantId: string, sessionId: string, userId: string) =>
  sql<Context>`
    select set_config('statement_timeout', private.role_statement_timeout('authenticated'), true),
           set_config('request.jwt.claims', ${claims}, true),
           set_config('role', 'authenticated', true),
           set_config('app.tenant_id', ${tenantId}, true),
           private.session_is_active(${sessionId}::uuid, ${userId}::uuid) as active,
           private.request_member_role() as role`.compile(db)
);

// Exported for the bench, which runs the same statement with pgbench (bench/reads.ts).
export function contextStatement(claims: AccessClaims, tenantId: string | null) {
  return contextQuery(JSON.stringify(claims), tenantId ?? "", claims.session_id, claims.sub);
}

function assertActive(context: Context | undefined): asserts context is Context {
  if (!context?.active) throw unauthorized("The session has ended. Sign in again.");
}

export function createRequestScope(deps: { db: Kysely<DB>; verify: AccessTokenVerifier }): RequestScope {
  return {
    async authenticate(request) {
      const accessToken = bearerToken(request);
      return { claims: await deps.verify(accessToken), accessToken };
    },

    async run(credentials, tenantId, work) {
      const { claims } = credentials;
      return await deps.db.transaction().execute(async (db) => {
        const { rows: [context] } = await db.executeQuery(contextStatement(claims, tenantId));
        assertActive(context);
        return await work({ ...credentials, userId: claims.sub, db }, context.role);
      });
    },

    async read(credentials, tenantId, work, authorize) {
      const { claims } = credentials;
      return await deps.db.transaction().execute(async (db) => {
        // Under RLS a statement after a context that fails its check finds nothing of the
        // tenant; what it found is never answered either way.
        const context = await eachStatementAfter(db, contextStatement(claims, tenantId));
        // Whatever `work` throws, even before its first promise, waits for the context's verdict.
        const outcome = await (async () => await work({ ...credentials, userId: claims.sub, db }))().then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        // A read that threw before its first statement (a malformed id) has not asked yet.
        if (context.results.length === 0) await runPrelude(db, context);
        for (const result of context.results) {
          const { rows: [row] } = await result;
          assertActive(row);
          authorize(row.role);
        }
        if ("error" in outcome) throw outcome.error;
        return outcome.value;
      });
    },
  };
}
