// Item 1's reads again, connected both ways a function may reach the database, side by
// side: two api instances the bench starts itself from supabase/functions/api/index.ts,
// each on a port of its own (scripts/ports.sh: base + 18 and + 19), loaded there without
// the gateway, so that the way to the database is all that differs between them:
// - direct: SUPABASE_DB_URL alone, as on a hosted project without DATABASE_URL: Postgres
//   itself, each statement prepared once per connection;
// - pooled: DATABASE_URL to the stack's PgBouncer in transaction mode, as the stack's
//   functions run and a hosted project's should (docs/database-connection.md): nothing prepared.
// Given an earlier revision (`npm run bench -- --before REV`), a third instance runs that
// revision's api, pooled, from a work tree of it (base + 20): the same reads before and
// after a change, measured side by side in one run rather than in two runs on a machine
// that may have changed between them.
// At each concurrency each instance runs, one after the other, in turns (inTurn). Before
// measuring, the database says which way each went.
import assert from "node:assert/strict";
import postgres from "postgres";
import { stack } from "../test/support/stack.ts";
import { type Before, benchPort, type Instance, startFunction, stopAll, untilServing } from "./instances.ts";
import { CONCURRENCIES, describe, headersFor, type ReadContext, type ReadRoute, readRoutes, WARM_UP_SECONDS } from "./reads.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

export type Path = "direct" | "pooled" | "before";
export type DirectAndPooled = Record<ReadRoute, Record<"direct" | "pooled", LoadResult[]> & { before?: LoadResult[] }> & {
  // The revision the `before` instance ran, when one did.
  before?: string;
};

// Where /v1 is on a function's own port: the platform hands a function its name first.
const FUNCTION_V1 = "/api/v1";
// The application_name the api function connects with.
const API_NAME = "pms-api";

type PathInstance = Instance & { path: Path };

// The stack's functions' settings for the api, but for the database: only what it reads.
function start(path: Path, port: number, root?: URL): PathInstance {
  const database: Record<string, string> = path === "direct" ? {} : { DATABASE_URL: stack.poolerUrl, DATABASE_POOL_MODE: "transaction" };
  const env = {
    SUPABASE_URL: stack.apiUrl,
    SUPABASE_ANON_KEY: stack.anonKey,
    SUPABASE_DB_URL: stack.dbUrl,
    AUTH_URL: stack.authUrl,
    ...database,
  };
  return { path, ...startFunction({ label: path, name: "api", port, env, root }) };
}

// The direct instance's backends carry its application_name and are none of PgBouncer's
// server connections (SHOW SERVERS lists their pids); the pooled instance's connections
// are PgBouncer's clients under the same name. The stack's own api function connects
// through PgBouncer too, but made no connection since the instances started.
async function assertPaths(sql: postgres.Sql, since: Date): Promise<void> {
  const admin = postgres(stack.poolerAdminUrl, { max: 1, fetch_types: false, prepare: false, onnotice: () => {} });
  try {
    const servers = await admin.unsafe<{ remote_pid: string }[]>("show servers");
    const serverPids = servers.map((server) => Number(server.remote_pid));
    const [direct] = await sql<{ backends: number }[]>`
      select count(*)::int as backends from pg_stat_activity
      where application_name = ${API_NAME} and backend_start >= ${since} and pid <> all(${serverPids}::int[])`;
    assert.ok(direct!.backends > 0, "the direct instance has backends of its own");
    const clients = await admin.unsafe<{ application_name: string; connect_time: string }[]>("show clients");
    const pooled = clients.filter((client) =>
      client.application_name === API_NAME && new Date(client.connect_time.replace(" UTC", "Z")) >= since
    );
    assert.ok(pooled.length > 0, "the pooled instance is a client of PgBouncer");
  } finally {
    await admin.end();
  }
}

// The order the instances run in at the point `at`, counted across both routes. Two: each
// goes first at every other point. With the earlier revision's, the two pooled ones are
// what is compared: they take turns in second and third place after the direct one, so
// neither always follows the other's load. The second place, right after the direct
// one's load, is not the third's: the turns also alternate from one route to the next, so
// neither is second at the same point of both routes.
function inTurn(instances: PathInstance[], at: number): PathInstance[] {
  if (instances.length === 2) return at % 2 === 0 ? instances : [...instances].reverse();
  const [direct, pooled, before] = instances as [PathInstance, PathInstance, PathInstance];
  return at % 2 === 0 ? [direct, pooled, before] : [direct, before, pooled];
}

export async function directAndPooled(context: ReadContext, tenant: number, before?: Before): Promise<DirectAndPooled> {
  // PgBouncer gives connect times to the second.
  const since = new Date(Math.floor(Date.now() / 1000) * 1000);
  const instances = [
    start("direct", benchPort(0)),
    start("pooled", benchPort(1)),
    ...(before ? [start("before", benchPort(2), before.root)] : []),
  ];
  try {
    await Promise.all(instances.map((instance) => untilServing(instance, `${FUNCTION_V1}/health`, 200)));
    const results: DirectAndPooled = before
      ? { before: before.revision, list: { direct: [], pooled: [], before: [] }, get: { direct: [], pooled: [], before: [] } }
      : { list: { direct: [], pooled: [] }, get: { direct: [], pooled: [] } };
    for (const [routeAt, route] of (["list", "get"] as const).entries()) {
      const { label } = readRoutes[route];
      const point = (instance: PathInstance) => ({
        origin: instance.origin,
        requestScript: readRoutes[route].lua(tenant, FUNCTION_V1),
        headers: headersFor(context, tenant),
      });
      for (const instance of instances) {
        const check = await fetch(`${instance.origin}${FUNCTION_V1}/reservations?limit=20`, { headers: headersFor(context, tenant) });
        const body = await check.text();
        assert.equal(check.status, 200, `the ${instance.path} instance answered ${check.status}: ${body}`);
        await runLoad({ ...point(instance), connections: 8, seconds: WARM_UP_SECONDS });
      }
      if (route === "list") await assertPaths(context.sql, since);
      for (const [at, connections] of CONCURRENCIES.entries()) {
        for (const instance of inTurn(instances, at + routeAt)) {
          const result = await runLoad({ ...point(instance), connections, seconds: context.seconds, observe: context.sql });
          context.log(`  ${label} c=${connections} ${instance.path}: ${describe(result)}`);
          results[route][instance.path]!.push(result);
        }
      }
    }
    return results;
  } finally {
    await stopAll(instances);
  }
}
