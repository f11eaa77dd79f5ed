// Part 9: one tenant with 100,000 reservations (bench/sql/seed-large-tenant.sql) beside the
// 1,000 small ones. Three filtered lists, loaded with wrk at 32 connections for the large
// tenant and for the read tenant (1,000 reservations) side by side, small, large, large,
// small, each side's two runs taken together: once with the exact total every list gives
// by default, once with `Prefer: count=none`, the documented way to skip it. And what
// each list's `total` costs on the large tenant: the route's own statement for each,
// captured from its query function as the API builds it (src/db/pagination.ts), run under
// the request's context with EXPLAIN (ANALYZE, BUFFERS), and the same two as whole
// transactions with pgbench.
import assert from "node:assert/strict";
import type { CompiledQuery } from "kysely";
import type postgres from "postgres";
import { listGuests } from "../src/guests/queries.ts";
import { listGuestsQuery } from "../src/guests/schema.ts";
import { listReservations } from "../src/reservations/queries.ts";
import { listReservationsQuery } from "../src/reservations/schema.ts";
import { contextStatement } from "../src/tenancy/request-scope.ts";
import { LARGE_TENANT, READ_TENANT, tenantId } from "./fixtures.ts";
import { runSqlLoad, type SqlLoadResult } from "./pgbench.ts";
import { scriptStatement, sqlScript, statementOf, withScriptFile } from "./statements.ts";
import { describe, headersFor, type ReadContext, V1_PATH, WARM_UP_SECONDS } from "./reads.ts";
import { combineRuns, type LoadResult, runLoad } from "./wrk.ts";

export const LARGE_TENANT_CONNECTIONS = 32;
// EXPLAIN ANALYZE runs of each statement, with and without the count, after one of each to warm up.
const EXPLAIN_RUNS = 5;

export type LargeTenantRoute = "dates" | "status" | "guestSearch";
export const largeTenantRoutes: LargeTenantRoute[] = ["dates", "status", "guestSearch"];

// What the front desk asks of a tenant's data: a month's stays (both tenants have stays in
// March 2026), the stays to come, and a guest by part of a name (seed.sql and
// seed-large-tenant.sql name guests alike, "Guest Number <g>", so it is the same search).
const routes: Record<LargeTenantRoute, { path: "/reservations" | "/guests"; query: Record<string, string> }> = {
  dates: { path: "/reservations", query: { from: "2026-03-01", to: "2026-04-01" } },
  status: { path: "/reservations", query: { status: "confirmed" } },
  guestSearch: { path: "/guests", query: { q: "Number 4" } },
};

function queryString(route: LargeTenantRoute): string {
  return Object.entries(routes[route].query).map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&");
}

export function largeTenantRouteLabel(route: LargeTenantRoute): string {
  return `GET /v1${routes[route].path}?${queryString(route)}`;
}

export type LargeTenantContext = ReadContext;

// The counts a side-by-side run asks for: the default, and none.
export const measuredCounts = ["exact", "none"] as const;
export type MeasuredCount = (typeof measuredCounts)[number];

export type SideBySide = {
  // Each side's two runs taken together (their p50 and p99 the worse of the two).
  small: LoadResult;
  large: LoadResult;
  // The four runs in the order they ran.
  runs: { tenant: "small" | "large"; result: LoadResult }[];
  // The large tenant's latency over the small one's.
  meanRatio: number;
  p50Ratio: number;
};

export type LargeTenantRouteResult = {
  label: string;
  // The list's `total` for each tenant: how many rows the filter matched.
  matches: { small: number; large: number };
  // Side by side with the exact total (no Prefer) and with `Prefer: count=none`.
  byCount: Record<MeasuredCount, SideBySide>;
};

export type CountCost = {
  label: string;
  // The route's statement for the large tenant as the API sends it, with its parameters,
  // for an exact total; and for none, which fetches one row more than the page instead.
  statement: string;
  parameters: unknown[];
  withoutCount: { statement: string; parameters: unknown[] };
  // Its execution time by EXPLAIN ANALYZE (per-node timing off, so that counting rows is
  // all the instrumentation adds), every run, and the median of each side.
  explain: { withCountMs: number[]; withoutCountMs: number[]; medianWithCountMs: number; medianWithoutCountMs: number };
  // The whole transaction (BEGIN, the request's context, the statement, COMMIT) with
  // pgbench, one client, unnamed statements as through the pooler.
  pgbench: { withCount: SqlLoadResult; withoutCount: SqlLoadResult };
  // 1 - without / with: the share of the statement's time, and of the transaction's, the count takes.
  share: { statement: number; transaction: number };
  // EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of each, as Postgres gave it, and one line of each for the report.
  plans: { withCount: unknown; withoutCount: unknown };
  outline: { withCount: string; withoutCount: string };
};

export type LargeTenantResult = {
  tenant: number;
  reservations: number;
  units: number;
  guests: number;
  smallTenant: number;
  connections: number;
  routes: Record<LargeTenantRoute, LargeTenantRouteResult>;
  count: Record<LargeTenantRoute, CountCost>;
};

// ---------------------------------------------------------------- the route's statement

// The page query the route runs for a count: its query string parsed by the route's own
// schema and handed to its query function, as src/http/resource-endpoints.ts's list does.
// With no rows to carry a total, a first page asks nothing more, so the first statement is all.
function routeStatement(route: LargeTenantRoute, count: MeasuredCount): Promise<CompiledQuery> {
  const { query } = routes[route];
  return statementOf(`${largeTenantRouteLabel(route)}'s first page, count=${count}`, async (db) => {
    if (routes[route].path === "/guests") {
      const filter = listGuestsQuery.parse(query);
      await listGuests(db, filter, { ...filter, count });
    } else {
      const filter = listReservationsQuery.parse(query);
      await listReservations(db, filter, { ...filter, count });
    }
  });
}

// ---------------------------------------------------------------- the request's context

// The request scope's statement (src/tenancy/request-scope.ts) for the bench owner in the tenant.
function scopeOf(context: LargeTenantContext, tenant: number): CompiledQuery {
  return contextStatement(context.claims, tenantId(tenant));
}

// `work` in one transaction after the request's context, as the bench owner: RLS applies to
// everything it runs, as to the request's statement. It writes nothing; its settings end with it.
export async function inRequestContext<T>(sql: postgres.Sql, scope: CompiledQuery, work: (trx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return await sql.begin(async (trx) => {
    const [context] = await trx.unsafe<{ active: boolean; role: string | null }[]>(
      scope.sql, scope.parameters as postgres.ParameterOrJSON<never>[], { prepare: false });
    assert.deepEqual([context?.active, context?.role], [true, "owner"], "the bench owner's session is active and an owner's");
    return await work(trx);
  }) as T;
}

// ---------------------------------------------------------------- EXPLAIN

export type PlanNode = Record<string, unknown> & { Plans?: PlanNode[] };
export type Explained = { Plan: PlanNode; "Execution Time": number };

export async function explain(trx: postgres.TransactionSql, statement: string, parameters: unknown[], options: string): Promise<Explained> {
  const [row] = await trx.unsafe<Record<string, unknown>[]>(`explain (${options}, format json) ${statement}`,
    parameters as postgres.ParameterOrJSON<never>[], { prepare: false });
  const plan = row?.["QUERY PLAN"];
  const document = (typeof plan === "string" ? JSON.parse(plan) : plan) as Explained[];
  assert.ok(document[0]?.Plan, "EXPLAIN gave a plan");
  return document[0];
}

const count = (value: unknown) => Number(value ?? 0).toLocaleString("en-US");

// One line for a plan: the nodes from the top down to the scan that feeds them (InitPlans,
// RLS's tenant and membership lookups, left out), each scan with the planner's estimate
// beside what it found and what its filter threw away; then the buffers touched, the
// temporary file blocks written (a window or sort that outgrew work_mem), and the time.
export function planOutline(explained: Explained): string {
  const steps: string[] = [];
  for (let node: PlanNode | undefined = explained.Plan; node;) {
    const type = String(node["Node Type"]);
    const on = node["Index Name"] ? ` using ${node["Index Name"]}` : node["Relation Name"] ? ` on ${node["Relation Name"]}` : "";
    const details: string[] = [];
    if (type.includes("Scan")) {
      const found = Number(node["Actual Rows"] ?? 0) * Number(node["Actual Loops"] ?? 1);
      details.push(`est. ${count(node["Plan Rows"])}, found ${count(found)} rows`);
      if (node["Rows Removed by Filter"]) details.push(`${count(node["Rows Removed by Filter"])} removed by filter`);
      if (node["Rows Removed by Index Recheck"]) details.push(`${count(node["Rows Removed by Index Recheck"])} by recheck`);
    }
    if (node["Sort Method"]) details.push(String(node["Sort Method"]));
    steps.push(`${type}${on}${details.length ? ` (${details.join(", ")})` : ""}`);
    node = node.Plans?.find((child) => !["InitPlan", "SubPlan"].includes(String(child["Parent Relationship"])));
  }
  const top = explained.Plan;
  const buffers = Number(top["Shared Hit Blocks"] ?? 0) + Number(top["Shared Read Blocks"] ?? 0);
  const temporary = Number(top["Temp Written Blocks"] ?? 0);
  return `${steps.join(" › ")}; ${count(buffers)} buffers${temporary ? `, ${count(temporary)} temporary blocks written` : ""}, ` +
    `${explained["Execution Time"].toFixed(1)} ms`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

// ---------------------------------------------------------------- pgbench

// The request as the database sees it: BEGIN, the context, the statement, COMMIT, each
// bound as the API binds it.
async function transactionLoad(context: LargeTenantContext, scope: CompiledQuery, statement: CompiledQuery) {
  const script = sqlScript([], ["BEGIN", scriptStatement(scope, "c"), scriptStatement(statement, "p"), "COMMIT"]);
  return await withScriptFile(script, (scriptFile) =>
    runSqlLoad({ db: context.db, scriptFile, clients: 1, seconds: context.seconds, variables: script.variables, protocol: "extended" }));
}

// ---------------------------------------------------------------- the part

// A request's headers for a count: none asked for gives the exact default.
function countHeaders(context: LargeTenantContext, tenant: number, count: MeasuredCount): Record<string, string> {
  return { ...headersFor(context, tenant), ...(count === "exact" ? {} : { Prefer: `count=${count}` }) };
}

// The route answers the tenant with a first page under each count, and what it matched.
async function checkRoute(context: LargeTenantContext, route: LargeTenantRoute, tenant: number): Promise<number> {
  const label = largeTenantRouteLabel(route);
  const pages = [];
  for (const count of measuredCounts) {
    const response = await fetch(`${context.origin}${V1_PATH}${routes[route].path}?${queryString(route)}`, {
      headers: countHeaders(context, tenant, count),
    });
    const text = await response.text();
    assert.equal(response.status, 200, `${label} answered ${response.status} for tenant ${tenant}, count=${count}: ${text}`);
    assert.equal(response.headers.get("preference-applied"), count === "exact" ? null : `count=${count}`, `${label}: count=${count} is applied`);
    pages.push(JSON.parse(text) as { data: { id: string }[]; pagination: { total: number | null; hasMore: boolean } });
  }
  const [exact, none] = pages as [typeof pages[0], typeof pages[0]];
  const total = exact.pagination.total ?? 0;
  assert.ok(total > 0, `${label} finds something in tenant ${tenant}`);
  assert.equal(exact.data.length, Math.min(20, total), "a first page of up to 20");
  assert.equal(none.pagination.total, null, `${label}: count=none answers no total`);
  assert.deepEqual(none.data.map((row) => row.id), exact.data.map((row) => row.id), `${label}: the same page whatever the count`);
  assert.equal(none.pagination.hasMore, exact.pagination.hasMore, `${label}: hasMore whatever the count`);
  return total;
}

async function countCost(context: LargeTenantContext, route: LargeTenantRoute, apiTotal: number): Promise<CountCost> {
  const label = largeTenantRouteLabel(route);
  const compiled = await routeStatement(route, "exact");
  const statement = compiled.sql;
  const parameters = [...compiled.parameters];
  const uncounted = await routeStatement(route, "none");
  const bare = uncounted.sql;
  const bareParameters = [...uncounted.parameters];
  assert.ok(!/count\(/.test(bare), `${label}: count=none's statement counts nothing: ${bare}`);
  const scope = scopeOf(context, LARGE_TENANT.number);

  const explained = await inRequestContext(context.sql, scope, async (trx) => {
    // The statement the bench explains is the one the API ran: it finds the same total.
    const [first] = await trx.unsafe<{ __total: string | number }[]>(statement, parameters as postgres.ParameterOrJSON<never>[], { prepare: false });
    assert.equal(Number(first?.__total), apiTotal, `${label}: the captured statement finds the API's total`);
    await explain(trx, statement, parameters, "analyze, timing off");
    await explain(trx, bare, bareParameters, "analyze, timing off");
    const plans = {
      withCount: await explain(trx, statement, parameters, "analyze, buffers"),
      withoutCount: await explain(trx, bare, bareParameters, "analyze, buffers"),
    };
    const withCountMs: number[] = [];
    const withoutCountMs: number[] = [];
    for (let run = 0; run < EXPLAIN_RUNS; run++) {
      // Alternating, so that neither side has the quieter moments.
      const order = run % 2 === 0 ? [true, false] : [false, true];
      for (const counted of order) {
        const timed = counted
          ? await explain(trx, statement, parameters, "analyze, timing off")
          : await explain(trx, bare, bareParameters, "analyze, timing off");
        (counted ? withCountMs : withoutCountMs).push(timed["Execution Time"]);
      }
    }
    return { plans, withCountMs, withoutCountMs };
  });

  const withCount = await transactionLoad(context, scope, compiled);
  const withoutCountLoad = await transactionLoad(context, scope, uncounted);
  const medianWithCountMs = median(explained.withCountMs);
  const medianWithoutCountMs = median(explained.withoutCountMs);
  const result: CountCost = {
    label,
    statement,
    parameters,
    withoutCount: { statement: bare, parameters: bareParameters },
    explain: { withCountMs: explained.withCountMs, withoutCountMs: explained.withoutCountMs, medianWithCountMs, medianWithoutCountMs },
    pgbench: { withCount, withoutCount: withoutCountLoad },
    share: {
      statement: 1 - medianWithoutCountMs / medianWithCountMs,
      transaction: 1 - withCount.transactionsPerSecond / withoutCountLoad.transactionsPerSecond,
    },
    plans: { withCount: explained.plans.withCount, withoutCount: explained.plans.withoutCount },
    outline: { withCount: planOutline(explained.plans.withCount), withoutCount: planOutline(explained.plans.withoutCount) },
  };
  context.log(`  ${label}, large tenant: statement ${medianWithCountMs.toFixed(2)} ms with the count, ` +
    `${medianWithoutCountMs.toFixed(2)} ms without (${(result.share.statement * 100).toFixed(0)} %); transaction ` +
    `${withCount.transactionsPerSecond.toFixed(0)} tx/s with, ${withoutCountLoad.transactionsPerSecond.toFixed(0)} without ` +
    `(${(result.share.transaction * 100).toFixed(0)} %)`);
  context.log(`    with the count: ${result.outline.withCount}`);
  context.log(`    without:        ${result.outline.withoutCount}`);
  return result;
}

export async function largeTenant(context: LargeTenantContext): Promise<LargeTenantResult> {
  const [seeded] = await context.sql<{ reservations: number }[]>`
    select count(*)::int as reservations from public.reservations where tenant_id = ${tenantId(LARGE_TENANT.number)}::uuid`;
  assert.equal(seeded?.reservations, LARGE_TENANT.reservations, "the large tenant is seeded");

  const small = READ_TENANT;
  const large = LARGE_TENANT.number;
  const connections = LARGE_TENANT_CONNECTIONS;
  const routeResults = {} as Record<LargeTenantRoute, LargeTenantRouteResult>;
  for (const route of largeTenantRoutes) {
    const label = largeTenantRouteLabel(route);
    const matches = { small: await checkRoute(context, route, small), large: await checkRoute(context, route, large) };
    const point = (tenant: number, count: MeasuredCount) => ({
      origin: context.origin,
      requestScript: `request = function() return wrk.format("GET", "${V1_PATH}${routes[route].path}?${queryString(route)}") end`,
      headers: countHeaders(context, tenant, count),
    });
    for (const tenant of [small, large]) await runLoad({ ...point(tenant, "exact"), connections: 8, seconds: WARM_UP_SECONDS });
    const byCount = {} as Record<MeasuredCount, SideBySide>;
    for (const count of measuredCounts) {
      // Small, large, large, small: a machine growing busier or quieter weighs on both alike.
      const runs: SideBySide["runs"] = [];
      for (const side of ["small", "large", "large", "small"] as const) {
        const result = await runLoad({ ...point(side === "small" ? small : large, count), connections, seconds: context.seconds, observe: context.sql });
        runs.push({ tenant: side, result });
        context.log(`  ${label}, count=${count}, ${side} tenant c=${connections}: ${describe(result)}`);
      }
      const taken = (side: "small" | "large") => combineRuns(runs.filter((run) => run.tenant === side).map((run) => run.result));
      const [smallSide, largeSide] = [taken("small"), taken("large")];
      byCount[count] = {
        small: smallSide, large: largeSide, runs,
        meanRatio: largeSide.meanMs / smallSide.meanMs,
        p50Ratio: largeSide.p50Ms / smallSide.p50Ms,
      };
      context.log(`  ${label}, count=${count}: ${matches.small} and ${matches.large} rows match; large / small mean latency ` +
        `${byCount[count].meanRatio.toFixed(2)}, p50 ${byCount[count].p50Ratio.toFixed(2)}`);
    }
    routeResults[route] = { label, matches, byCount };
  }

  const costs = {} as Record<LargeTenantRoute, CountCost>;
  for (const route of largeTenantRoutes) costs[route] = await countCost(context, route, routeResults[route].matches.large);

  return {
    tenant: large,
    reservations: LARGE_TENANT.reservations,
    units: LARGE_TENANT.units,
    guests: LARGE_TENANT.guests,
    smallTenant: small,
    connections,
    routes: routeResults,
    count: costs,
  };
}
