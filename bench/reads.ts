// Item 1 (API reads), item 2 (their ceilings) and the reads item 5 compares: the two
// read routes through the gateway with wrk, the same SQL with pgbench, and the bare
// function (supabase/functions/bench-ceiling) with a body of the same size.
import assert from "node:assert/strict";
import type postgres from "postgres";
import type { AccessClaims } from "../src/http/request-scope.ts";
import { findReservation, listReservations } from "../src/reservations/queries.ts";
import { listReservationsQuery } from "../src/reservations/schema.ts";
import { contextStatement } from "../src/tenancy/request-scope.ts";
import { LUA_IDS, RESERVATIONS_PER_TENANT, reservationId, tenantDigits, tenantId } from "./fixtures.ts";
import type { DbAddress } from "./database.ts";
import { type SqlLoadResult, runSqlLoad } from "./pgbench.ts";
import { type ScriptStatement, scriptStatement, type SqlScript, sqlScript, statementOf, withScriptFile } from "./statements.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

export const CONCURRENCIES = [1, 8, 32, 128] as const;
export const V1_PATH = "/functions/v1/api/v1";
const CEILING_PATH = "/functions/v1/bench-ceiling";
export const WARM_UP_SECONDS = 2;

export type ReadRoute = "list" | "get";

// `v1` is where /v1 is: the gateway's path to the api function by default, or /api/v1
// on a function's own port.
export const readRoutes: Record<ReadRoute, { label: string; lua: (tenant: number, v1?: string) => string }> = {
  list: {
    label: "GET /v1/reservations?limit=20",
    lua: (_, v1 = V1_PATH) => `request = function() return wrk.format("GET", "${v1}/reservations?limit=20") end`,
  },
  get: {
    label: "GET /v1/reservations/{id}",
    lua: (tenant, v1 = V1_PATH) => `${LUA_IDS}
request = function()
  return wrk.format("GET", "${v1}/reservations/" .. reservation_id(${tenant}, math.random(1, ${RESERVATIONS_PER_TENANT})))
end`,
  },
};

export type ReadContext = {
  origin: string;
  token: string;
  claims: AccessClaims;
  db: DbAddress;
  sql: postgres.Sql;
  seconds: number;
  log: (line: string) => void;
};

export function headersFor(context: ReadContext, tenant: number): Record<string, string> {
  return { authorization: `Bearer ${context.token}`, "x-tenant-id": tenantId(tenant) };
}

// Each route once, before it is loaded: the answer is what the benchmark claims it is.
// Gives the body sizes the HTTP ceiling answers with.
export async function checkReadRoutes(context: ReadContext, tenant: number): Promise<Record<ReadRoute, number>> {
  const headers = headersFor(context, tenant);
  const list = await fetch(`${context.origin}${V1_PATH}/reservations?limit=20`, { headers });
  const listText = await list.text();
  assert.equal(list.status, 200, `the list answered ${list.status}: ${listText}`);
  const page = JSON.parse(listText) as { data: unknown[]; pagination: { total: number } };
  assert.equal(page.data.length, 20, "a page of 20");
  assert.equal(page.pagination.total, RESERVATIONS_PER_TENANT, `tenant ${tenant} has ${RESERVATIONS_PER_TENANT} reservations`);
  const one = await fetch(`${context.origin}${V1_PATH}/reservations/${reservationId(tenant, 500)}`, { headers });
  const oneText = await one.text();
  assert.equal(one.status, 200, `the reservation answered ${one.status}: ${oneText}`);
  const encoder = new TextEncoder();
  return { list: encoder.encode(listText).length, get: encoder.encode(oneText).length };
}

// One read route of the API as wrk loads it, for one tenant.
function apiPoint(context: ReadContext, route: ReadRoute, tenant: number) {
  return { origin: context.origin, requestScript: readRoutes[route].lua(tenant), headers: headersFor(context, tenant) };
}

async function loadApi(context: ReadContext, route: ReadRoute, point: ReturnType<typeof apiPoint>, connections: number) {
  const result = await runLoad({ ...point, connections, seconds: context.seconds, observe: context.sql });
  context.log(`  ${readRoutes[route].label} c=${connections}: ${describe(result)}`);
  return result;
}

// The API's read routes at every concurrency, for one tenant.
export async function apiReads(context: ReadContext, tenant: number): Promise<Record<ReadRoute, LoadResult[]>> {
  const results = { list: [] as LoadResult[], get: [] as LoadResult[] };
  for (const route of ["list", "get"] as const) {
    const point = apiPoint(context, route, tenant);
    await runLoad({ ...point, connections: 8, seconds: WARM_UP_SECONDS });
    for (const connections of CONCURRENCIES) results[route].push(await loadApi(context, route, point, connections));
  }
  return results;
}

// One of a tenant's reservations at random per transaction, like the HTTP run's, for
// pgbench, which cannot build text: its id in SQL, in fixtures.ts's pattern, from :r (set
// by the script's setup) and :tenant_digits.
export const RANDOM_RESERVATION_ID = {
  setup: [`\\set r random(1, ${RESERVATIONS_PER_TENANT})`],
  expression: "('b5e' || lpad(:r::text, 5, '0') || '-0000-4000-8000-' || :tenant_digits)::uuid",
};

// The read route's statement as its query function builds it, for pgbench: the list's
// first page of 20 with its exact total, or one reservation by an id chosen per
// transaction (in place of the id the function binds).
async function routeStatement(route: ReadRoute, tenant: number): Promise<ScriptStatement> {
  if (route === "list") {
    const filter = listReservationsQuery.parse({ limit: "20" });
    return scriptStatement(await statementOf("the list", (db) => listReservations(db, filter, filter)), "p");
  }
  const found = await statementOf("the read by id", (db) => findReservation(db, reservationId(tenant, 1)));
  return scriptStatement(found, "p", { 1: RANDOM_RESERVATION_ID.expression });
}

// The route's request as the database sees it, for the bench owner in `tenant`, with
// pgbench -M prepared (as an instance connected directly binds its parameters): BEGIN, the
// request scope's one statement (src/tenancy/request-scope.ts), the route's statement,
// COMMIT. The API sends the four at once, where pgbench waits for each answer.
async function routeScript(context: ReadContext, route: ReadRoute, tenant: number): Promise<SqlScript> {
  const scope = scriptStatement(contextStatement(context.claims, tenantId(tenant)), "c");
  const statement = await routeStatement(route, tenant);
  const script = sqlScript(route === "get" ? RANDOM_RESERVATION_ID.setup : [], ["BEGIN", scope, statement, "COMMIT"]);
  return { ...script, variables: { ...script.variables, tenant_digits: tenantDigits(tenant) } };
}

// The request scope's statement for the bench owner in `tenant`, checked once: an active
// session, an owner's membership, the tenant's rows.
async function checkScope(context: ReadContext, tenant: number): Promise<void> {
  const scope = contextStatement(context.claims, tenantId(tenant));
  await context.sql.begin(async (trx) => {
    const [row] = await trx.unsafe<{ active: boolean; role: string | null }[]>(
      scope.sql, scope.parameters as postgres.ParameterOrJSON<never>[], { prepare: false });
    assert.deepEqual([row?.active, row?.role], [true, "owner"], "pgbench's session is active and an owner's");
    const [visible] = await trx<{ count: number }[]>`select count(*)::int as count from public.reservations`;
    assert.equal(visible?.count, RESERVATIONS_PER_TENANT, "pgbench's scope sees the tenant's reservations");
  }); // it wrote nothing; its settings end with it
}

export type ReadsWithCeilings = {
  api: Record<ReadRoute, LoadResult[]>;
  sql: Record<ReadRoute, SqlLoadResult[]>;
  http: Record<ReadRoute, LoadResult[]>;
};

// The API's read routes and both ceilings, point by point: at each concurrency the API,
// then the same SQL with pgbench, then the bare function through the same gateway
// (with the same headers and a body of the route's size), one after the other, so that
// a ratio compares numbers taken seconds apart, not minutes, on a machine whose speed
// wanders.
export async function readsWithCeilings(
  context: ReadContext,
  bodyBytes: Record<ReadRoute, number>,
  tenant: number,
): Promise<ReadsWithCeilings> {
  await checkScope(context, tenant);
  const results: ReadsWithCeilings = {
    api: { list: [], get: [] },
    sql: { list: [], get: [] },
    http: { list: [], get: [] },
  };
  for (const route of ["list", "get"] as const) {
    const { label } = readRoutes[route];
    const api = apiPoint(context, route, tenant);
    const script = await routeScript(context, route, tenant);
    const ceilingPath = `${CEILING_PATH}?bytes=${bodyBytes[route]}`;
    const check = await fetch(`${context.origin}${ceilingPath}`);
    assert.equal(check.status, 200, "the bench-ceiling function answers");
    assert.equal((await check.arrayBuffer()).byteLength, bodyBytes[route], "with a body of the route's size");
    const http = {
      origin: context.origin,
      requestScript: `request = function() return wrk.format("GET", "${ceilingPath}") end`,
      headers: headersFor(context, tenant),
    };
    await withScriptFile(script, async (scriptFile) => {
      const sql = { db: context.db, scriptFile, variables: script.variables };
      await runLoad({ ...api, connections: 8, seconds: WARM_UP_SECONDS });
      await runSqlLoad({ ...sql, clients: 8, seconds: WARM_UP_SECONDS });
      await runLoad({ ...http, connections: 8, seconds: WARM_UP_SECONDS });
      for (const connections of CONCURRENCIES) {
        const apiResult = await loadApi(context, route, api, connections);
        const sqlResult = await runSqlLoad({ ...sql, clients: connections, seconds: context.seconds });
        context.log(`  SQL ceiling ${label} c=${connections}: ${sqlResult.transactionsPerSecond.toFixed(0)} tx/s, mean ${sqlResult.meanMs.toFixed(2)} ms, errors ${sqlResult.errors}`);
        const httpResult = await runLoad({ ...http, connections, seconds: context.seconds });
        context.log(`  HTTP ceiling (${bodyBytes[route]} bytes) c=${connections}: ${describe(httpResult)}`);
        results.api[route].push(apiResult);
        results.sql[route].push(sqlResult);
        results.http[route].push(httpResult);
      }
    });
  }
  return results;
}

export function describe(result: LoadResult): string {
  const { machineMs, databaseMs, databaseWait } = result.pauses;
  return `${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, errors ${result.errors}, ` +
    `longest pause: machine ${machineMs.toFixed(0)} ms` +
    (databaseMs === null ? "" : `, a statement ${databaseMs.toFixed(0)} ms${databaseWait ? ` (${databaseWait})` : ""}`);
}
