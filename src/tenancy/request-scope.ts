import { type Kysely, sql, type Transaction } from "kysely";
import { type AccessClaims, type AccessTokenVerifier, bearerToken } from "../auth/access-token.ts";
import { compileOnce } from "../db/compile-once.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/database.types.ts";
import { eachStatementAfter, runPrelude } from "../db/pipelined-transactions.ts";
import type { Reads } from "../db/reads.ts";
import { unauthorized } from "../http/problem.ts";

export type TenantRole = Database["public"]["Enums"]["tenant_role"];

export type Credentials = { claims: AccessClaims; accessToken: string };

// `db` is the request's transaction, or for a read, its statements (see Reads).
export type Session<Db extends Reads = Transaction<DB>> = Credentials & { userId: string; db: Db };

export type RequestScope = {
  // Checks the token's signature and expiry; no database work. Asynchronous because the
  // signing keys may have to be fetched from Supabase Auth first.
  authenticate(request: Request): Promise<Credentials>;
  // One transaction: the RLS context, the session check, the membership, then `work`.
  run<T>(credentials: Credentials, tenantId: string | null, work: (session: Session, role: TenantRole | null) => Promise<T>): Promise<T>;
  // The same for a read, one round trip per statement: each of the read's statements runs
  // in a transaction of its own after the context, all sent at once, and `authorize`
  // judges the role before anything the read found is answered. So `work` gets Reads.
  read<T>(
    credentials: Credentials,
    tenantId: string,
    work: (session: Session<Reads>) => Promise<T>,
    authorize: (role: TenantRole | null) => void,
  ): Promise<T>;
};

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
