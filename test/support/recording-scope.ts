// A request scope with no database, for the endpoint factories' tests: it records which
// way each request went (scope.read or scope.run, in which tenant) and hands the handler
// a stand-in for its `db` that names the way, so a test can see which one a handler got.
import type { Transaction } from "kysely";
import type { DB } from "../../src/db/database.ts";
import type { Reads } from "../../src/db/reads.ts";
import type { Credentials, RequestScope, TenantRole } from "../../src/http/request-scope.ts";

export type Way = "read" | "run";

export type RecordingScope = RequestScope & { calls: { way: Way; tenantId: string | null }[] };

// What the stand-in `db` is; any query through it would fail.
export function wayOf(db: Reads): Way {
  return (db as unknown as { way: Way }).way;
}

export function recordingScope(role: TenantRole = "owner"): RecordingScope {
  const credentials: Credentials = {
    claims: { sub: crypto.randomUUID(), session_id: crypto.randomUUID(), role: "authenticated", exp: 0, aud: "authenticated" },
    accessToken: "token",
  };
  const calls: RecordingScope["calls"] = [];
  const session = (way: Way) => ({ ...credentials, userId: credentials.claims.sub, db: { way } as unknown as Transaction<DB> });
  return {
    calls,
    authenticate: () => Promise.resolve(credentials),
    async run(_, tenantId, work) {
      calls.push({ way: "run", tenantId });
      return await work(session("run"), role);
    },
    async read(_, tenantId, work, authorize) {
      calls.push({ way: "read", tenantId });
      const value = await work(session("read"));
      authorize(role);
      return value;
    },
  };
}
