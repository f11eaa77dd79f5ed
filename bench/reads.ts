// Item 1 (API reads), item 2 (their ceilings) and the reads item 5 compares: the two
// read routes through the gateway with wrk, the same SQL with pgbench, and the bare
// function (supabase/functions/bench-ceiling) with a body of the same size.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { LUA_IDS, RESERVATIONS_PER_TENANT, reservationId, tenantDigits, tenantId } from "./fixtures.ts";
import type { DbAddress } from "./database.ts";
import { type SqlLoadResult, runSqlLoad } from "./pgbench.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

export const CONCURRENCIES = [1, 8, 32, 128] as const;
export const V1_PATH = "/functions/v1/api/v1";
const CEILING_PATH = "/functions/v1/bench-ceiling";
export const WARM_UP_SECONDS = 2;

export type ReadRoute = "list" | "get";

// `v1` is where /v1 is: the gateway's path to the api function by default, or /api/v1
// on a function's own port.
export const readRoutes: Record<ReadRoute, { label: string; pgbenchScript: URL; lua: (tenant: number, v1?: string) => string }> = {
  list: {
    label: "GET /v1/reservations?limit=20",
    pgbenchScript: new URL("./pgbench/reservations-list.sql", import.meta.url),
    lua: (_, v1 = V1_PATH) => `request = function() return wrk.format("GET", "${v1}/reservations?limit=20") end`,
  },
  get: {
    label: "GET /v1/reservations/{id}",
    pgbenchScript: new URL("./pgbench/reservations-get.sql", import.meta.url),
    lua: (tenant, v1 = V1_PATH) => `${LUA_IDS}
request = function()
  return wrk.format("GET", "${v1}/reservations/" .. reservation_id(${tenant}, math.random(1, ${RESERVATIONS_PER_TENANT})))
end`,
  },
};

export type ReadContext = {
  origin: string;
  token: string;
  claims: Record<string, unknown>;
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
  const result = await runLoad({ ...point, connections, seconds: context.seconds });
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

// pgbench's variables for the bench owner in `tenant`, checked once with the request
// scope's statement: an active session, an owner's membership, the tenant's rows.
async function sqlVariables(context: ReadContext, tenant: number): Promise<Record<string, string>> {
  const variables = {
    claims: JSON.stringify(context.claims),
    tenant: tenantId(tenant),
    tenant_digits: tenantDigits(tenant),
    session: String(context.claims.session_id),
    user: String(context.claims.sub),
  };
  await context.sql.begin(async (trx) => {
    const [scope] = await trx<{ active: boolean; role: string | null }[]>`
      select set_config('request.jwt.claims', ${variables.claims}, true),
             set_config('role', 'authenticated', true),
             set_config('app.tenant_id', ${variables.tenant}, true),
             private.session_is_active(${variables.session}::uuid, ${variables.user}::uuid) as active,
             private.request_member_role() as role`;
    assert.deepEqual([scope?.active, scope?.role], [true, "owner"], "pgbench's session is active and an owner's");
    const [visible] = await trx<{ count: number }[]>`select count(*)::int as count from public.reservations`;
    assert.equal(visible?.count, RESERVATIONS_PER_TENANT, "pgbench's scope sees the tenant's reservations");
  }); // it wrote nothing; its settings end with it
  return variables;
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
  const variables = await sqlVariables(context, tenant);
  const results: ReadsWithCeilings = {
    api: { list: [], get: [] },
    sql: { list: [], get: [] },
    http: { list: [], get: [] },
  };
  for (const route of ["list", "get"] as const) {
    const { label } = readRoutes[route];
    const api = apiPoint(context, route, tenant);
    const sql = { db: context.db, scriptFile: readRoutes[route].pgbenchScript.pathname, variables };
    const ceilingPath = `${CEILING_PATH}?bytes=${bodyBytes[route]}`;
    const check = await fetch(`${context.origin}${ceilingPath}`);
    assert.equal(check.status, 200, "the bench-ceiling function answers");
    assert.equal((await check.arrayBuffer()).byteLength, bodyBytes[route], "with a body of the route's size");
    const http = {
      origin: context.origin,
      requestScript: `request = function() return wrk.format("GET", "${ceilingPath}") end`,
      headers: headersFor(context, tenant),
    };
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
  }
  return results;
}

export function describe(result: LoadResult): string {
  return `${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, errors ${result.errors}`;
}
