// What a run found, as JSON (everything measured) and as the Markdown tables that
// docs/benchmarks.md shows for the latest run (withLatestResults puts them there).
// Ratios are the point: both sides of each are measured in the same run.
import type { DirectAndPooled } from "./direct-and-pooled.ts";
import { LIMITER_CONCURRENCIES, type LimiterResults } from "./external.ts";
import type { SqlLoadResult } from "./pgbench.ts";
import type { PipelineResult } from "./pipeline.ts";
import type { WebhooksResult } from "./webhooks.ts";
import { CONCURRENCIES, type ReadRoute, readRoutes } from "./reads.ts";
import type { WriteResults } from "./writes.ts";
import type { LoadResult } from "./wrk.ts";

export type RouteResults = { api: LoadResult[]; sqlCeiling: SqlLoadResult[]; httpCeiling: LoadResult[]; bodyBytes: number };

export type Measurements = {
  reads: Record<ReadRoute, RouteResults>;
  // The same reads from two api instances, connected directly and through the pooler.
  directAndPooled: DirectAndPooled;
  // Item 1's reads again while the database holds one bench tenant only.
  oneTenantReads: Record<ReadRoute, LoadResult[]>;
  writes: WriteResults;
  pipeline: PipelineResult;
  // Item 8: outbound webhooks, beside the pipeline.
  webhooks: WebhooksResult;
  // Item 7: an external read with and without the rate limiter.
  limiter: LimiterResults;
};

export type RunInfo = {
  date: string;
  commit: string;
  // Uncommitted changes in the tree when it ran.
  dirty: boolean;
  cores: number;
  loadAverageAtStart: number[];
  secondsPerPoint: number;
  tenants: number;
  reservationsPerTenant: number;
};

export type Target = { name: string; measured: number; goal: string; met: boolean; unit: string };

export type Report = RunInfo & {
  durationSeconds: number;
  errors: number;
  ratios: {
    // API req/s over the lower of the two ceilings, per route and concurrency.
    apiShareOfLowerCeiling: Record<ReadRoute, number[]>;
    // Mean latency with 1,000 tenants over the same with one, per route and concurrency.
    scale: Record<ReadRoute, number[]>;
    // Req/s through the pooler over req/s connected directly, per route and concurrency.
    pooledOverDirect: Record<ReadRoute, number[]>;
    // 1 - check-ins/s with the trigger over check-ins/s without it.
    triggerCost: number;
    pipelineShareOfPgmqCeiling: number;
    // 1 - the external read's SQL tx/s with the rate limiter over those without, per concurrency.
    limiterCost: number[];
  };
  targets: Target[];
  measurements: Measurements;
};

const AT_32 = CONCURRENCIES.indexOf(32);
const routes: ReadRoute[] = ["list", "get"];

function lowerCeiling(route: RouteResults, index: number): number {
  return Math.min(route.sqlCeiling[index]!.transactionsPerSecond, route.httpCeiling[index]!.requestsPerSecond);
}

export function buildReport(info: RunInfo, measurements: Measurements, durationSeconds: number): Report {
  const { reads, directAndPooled, oneTenantReads, writes, pipeline, webhooks, limiter } = measurements;
  const share = (route: ReadRoute) =>
    CONCURRENCIES.map((_, i) => reads[route].api[i]!.requestsPerSecond / lowerCeiling(reads[route], i));
  const scale = (route: ReadRoute) => CONCURRENCIES.map((_, i) => reads[route].api[i]!.meanMs / oneTenantReads[route][i]!.meanMs);
  const pooledOverDirect = (route: ReadRoute) =>
    CONCURRENCIES.map((_, i) => directAndPooled[route].pooled[i]!.requestsPerSecond / directAndPooled[route].direct[i]!.requestsPerSecond);
  const ratios = {
    apiShareOfLowerCeiling: { list: share("list"), get: share("get") },
    scale: { list: scale("list"), get: scale("get") },
    pooledOverDirect: { list: pooledOverDirect("list"), get: pooledOverDirect("get") },
    triggerCost: 1 - writes.checkIn.requestsPerSecond / writes.checkInWithoutTrigger.requestsPerSecond,
    pipelineShareOfPgmqCeiling: pipeline.notificationsPerSecond / pipeline.pgmqCeiling.messagesPerSecond,
    limiterCost: LIMITER_CONCURRENCIES.map((_, i) =>
      1 - limiter.sqlWith[i]!.transactionsPerSecond / limiter.sqlWithout[i]!.transactionsPerSecond
    ),
  };
  const worst = (values: number[], pick: "min" | "max") => pick === "min" ? Math.min(...values) : Math.max(...values);
  const shareAt32 = worst(routes.map((route) => ratios.apiShareOfLowerCeiling[route][AT_32]!), "min");
  const p99At32 = worst(routes.map((route) => reads[route].api[AT_32]!.p99Ms), "max");
  const scaleAt32 = worst(routes.map((route) => ratios.scale[route][AT_32]!), "max");
  const targets: Target[] = [
    { name: "API reads, share of the lower ceiling at 32 connections (worse route)", measured: shareAt32 * 100, unit: "%", goal: "≥ 60 %", met: shareAt32 >= 0.6 },
    { name: "API reads, p99 at 32 connections (worse route)", measured: p99At32, unit: "ms", goal: "< 50 ms", met: p99At32 < 50 },
    { name: "Cost of the notification trigger on check-in", measured: ratios.triggerCost * 100, unit: "%", goal: "< 25 %", met: ratios.triggerCost < 0.25 },
    { name: "Notification pipeline", measured: pipeline.notificationsPerSecond, unit: "/s", goal: "≥ 1,000 /s", met: pipeline.notificationsPerSecond >= 1000 },
    { name: "Scale: mean latency, 1,000 tenants over 1, at 32 connections (worse route)", measured: scaleAt32, unit: "×", goal: "< 1.3", met: scaleAt32 < 1.3 },
  ];
  const errors = routes.reduce((sum, route) =>
    sum + [...reads[route].api, ...reads[route].httpCeiling, ...oneTenantReads[route], ...directAndPooled[route].direct,
      ...directAndPooled[route].pooled].reduce((s, r) => s + r.errors, 0) +
    reads[route].sqlCeiling.reduce((s, r) => s + r.errors, 0), 0) +
    writes.patchGuest.errors + writes.checkIn.errors + writes.checkInWithoutTrigger.errors + pipeline.errors + webhooks.errors +
    [...limiter.api, ...limiter.sqlWith, ...limiter.sqlWithout].reduce((sum, r) => sum + r.errors, 0);
  return { ...info, durationSeconds, errors, ratios, targets, measurements };
}

const fixed = (value: number, digits = 0) => value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percent = (ratio: number) => `${fixed(ratio * 100)} %`;

// docs/benchmarks.md with its latest results replaced by the run `name`'s tables: the
// section between its two markers, the first of which names the run's file.
export const LATEST_RESULTS_START = /<!-- bench: the latest results, bench\/results\/([^ ]+)\.md; npm run bench rewrites this section -->\n/;
export const LATEST_RESULTS_END = "<!-- bench: end of the latest results -->\n";

export function withLatestResults(page: string, name: string, table: string): string {
  const start = LATEST_RESULTS_START.exec(page);
  const end = page.indexOf(LATEST_RESULTS_END);
  if (!start || end < start.index) throw new Error("docs/benchmarks.md has no latest-results markers");
  const marker = `<!-- bench: the latest results, bench/results/${name}.md; npm run bench rewrites this section -->\n`;
  return `${page.slice(0, start.index)}${marker}${table.replace(/\n*$/, "\n")}${page.slice(end)}`;
}

export function markdown(report: Report): string {
  const { reads, directAndPooled, oneTenantReads, writes, pipeline, webhooks, limiter } = report.measurements;
  const lines: string[] = [];
  lines.push(
    `Run ${report.date} at commit \`${report.commit}\`${report.dirty ? " (with uncommitted changes)" : ""}, ${report.cores} cores, ` +
      `load average ${report.loadAverageAtStart.map((l) => l.toFixed(2)).join(" ")} at the start, ${report.secondsPerPoint} s a point, ` +
      `${fixed(report.durationSeconds)} s in all. Errors: **${report.errors}**.`,
    "",
    `**API reads** (one tenant among ${fixed(report.tenants)} with ${fixed(report.reservationsPerTenant)} reservations each; ceilings measured in the same run)`,
    "",
    "| route | conn | API req/s | p50 ms | p99 ms | errors | SQL ceiling tx/s | HTTP ceiling req/s | API / lower ceiling |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
  );
  for (const route of routes) {
    CONCURRENCIES.forEach((connections, i) => {
      const api = reads[route].api[i]!;
      lines.push(
        `| ${readRoutes[route].label} | ${connections} | ${fixed(api.requestsPerSecond)} | ${fixed(api.p50Ms, 1)} | ${fixed(api.p99Ms, 1)} | ` +
          `${api.errors} | ${fixed(reads[route].sqlCeiling[i]!.transactionsPerSecond)} | ${fixed(reads[route].httpCeiling[i]!.requestsPerSecond)} | ` +
          `${percent(report.ratios.apiShareOfLowerCeiling[route][i]!)} |`,
      );
    });
  }
  lines.push(
    "",
    "**Direct and through the pooler** (the same reads from two api instances the bench starts from `supabase/functions/api/index.ts`, " +
      "loaded on their own ports without the gateway, side by side at each point: one connected directly with prepared statements, " +
      "as with `SUPABASE_DB_URL` alone; one through PgBouncer in transaction mode without them, as the stack's functions and a hosted project's should run)",
    "",
    "| route | conn | direct req/s | p50 ms | p99 ms | pooled req/s | p50 ms | p99 ms | errors | pooled / direct |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  );
  for (const route of routes) {
    CONCURRENCIES.forEach((connections, i) => {
      const direct = directAndPooled[route].direct[i]!;
      const pooled = directAndPooled[route].pooled[i]!;
      lines.push(
        `| ${readRoutes[route].label} | ${connections} | ${fixed(direct.requestsPerSecond)} | ${fixed(direct.p50Ms, 1)} | ${fixed(direct.p99Ms, 1)} | ` +
          `${fixed(pooled.requestsPerSecond)} | ${fixed(pooled.p50Ms, 1)} | ${fixed(pooled.p99Ms, 1)} | ${direct.errors + pooled.errors} | ` +
          `${percent(report.ratios.pooledOverDirect[route][i]!)} |`,
      );
    });
  }
  lines.push(
    "",
    "**Scale** (the same reads while the database holds one bench tenant, then 1,000)",
    "",
    "| route | conn | 1 tenant: req/s, mean ms | 1,000 tenants: req/s, mean ms | latency ratio |",
    "|---|--:|--:|--:|--:|",
  );
  for (const route of routes) {
    CONCURRENCIES.forEach((connections, i) => {
      const one = oneTenantReads[route][i]!;
      const many = reads[route].api[i]!;
      lines.push(
        `| ${readRoutes[route].label} | ${connections} | ${fixed(one.requestsPerSecond)}, ${fixed(one.meanMs, 2)} | ` +
          `${fixed(many.requestsPerSecond)}, ${fixed(many.meanMs, 2)} | ${fixed(report.ratios.scale[route][i]!, 2)} |`,
      );
    });
  }
  lines.push(
    "",
    "**Writes** (32 connections, random bench tenants; check-ins ran with, without, without and with the trigger, each side's two runs taken together, their p50 and p99 the worse of the two)",
    "",
    "| route | req/s | p50 ms | p99 ms | errors |",
    "|---|--:|--:|--:|--:|",
    ...([
      ["PATCH /v1/guests/{id}", writes.patchGuest],
      ["POST /v1/reservations/{id}/check-in", writes.checkIn],
      ["the same, notification trigger disabled", writes.checkInWithoutTrigger],
    ] as const).map(([label, r]) => `| ${label} | ${fixed(r.requestsPerSecond)} | ${fixed(r.p50Ms, 1)} | ${fixed(r.p99Ms, 1)} | ${r.errors} |`),
    "",
    `Trigger cost: ${percent(report.ratios.triggerCost)} of check-in throughput.`,
    "",
    `**Notification pipeline**: ${fixed(pipeline.checkIns)} check-ins across 100 tenants, each reaching the guest by email and SMS and ` +
      `three staff in-app: ${fixed(pipeline.notifications)} notifications (${fixed(pipeline.byChannel.email)} email, ` +
      `${fixed(pipeline.byChannel.sms)} SMS, ${fixed(pipeline.byChannel.in_app)} in-app), enqueued in ${fixed(pipeline.enqueueSeconds, 2)} s, ` +
      `drained by the worker in ${fixed(pipeline.drainSeconds, 2)} s (${pipeline.workerRuns} calls): **${fixed(pipeline.notificationsPerSecond)} /s**, ` +
      `errors ${pipeline.errors}. pgmq's own ceiling (send, read, delete in SQL): ${fixed(pipeline.pgmqCeiling.messagesPerSecond)} /s; ` +
      `the pipeline runs at ${percent(report.ratios.pipelineShareOfPgmqCeiling)} of it.`,
    "",
    `**Outbound webhooks**: ${fixed(webhooks.deliveries)} signed deliveries to 100 tenants' endpoints on the local receiver, ` +
      `enqueued in ${fixed(webhooks.enqueueSeconds, 2)} s, drained by the webhooks worker in ${fixed(webhooks.drainSeconds, 2)} s ` +
      `(${webhooks.workerRuns} calls): **${fixed(webhooks.deliveriesPerSecond)} /s**, errors ${webhooks.errors}; ` +
      `${percent(webhooks.deliveriesPerSecond / pipeline.notificationsPerSecond)} of the notification pipeline's rate.`,
    "",
    "**The external API's rate limiter** (`GET /v1/external/reservations/{id}` with one API key of the read tenant, every " +
      "request counted; its SQL without and with the limiter's statement, run with, without, without and with, each side's two runs taken together)",
    "",
    "| conn | API req/s | p50 ms | p99 ms | errors | SQL without limiter tx/s | SQL with limiter tx/s | with / without |",
    "|--:|--:|--:|--:|--:|--:|--:|--:|",
    ...LIMITER_CONCURRENCIES.map((connections, i) => {
      const api = limiter.api[i]!;
      const without = limiter.sqlWithout[i]!.transactionsPerSecond;
      const withLimiter = limiter.sqlWith[i]!.transactionsPerSecond;
      return `| ${connections} | ${fixed(api.requestsPerSecond)} | ${fixed(api.p50Ms, 1)} | ${fixed(api.p99Ms, 1)} | ${api.errors} | ` +
        `${fixed(without)} | ${fixed(withLimiter)} | ${percent(withLimiter / without)} |`;
    }),
    "",
    `Limiter cost: ${LIMITER_CONCURRENCIES.map((connections, i) => `${percent(report.ratios.limiterCost[i]!)} at ${connections}`).join(", ")} ` +
      "connections of the external read's SQL throughput.",
    "",
    "**Targets**",
    "",
    "| target | measured | goal | met |",
    "|---|--:|--:|:-:|",
    ...report.targets.map((t) => `| ${t.name} | ${fixed(t.measured, { "×": 2, ms: 1 }[t.unit] ?? 0)} ${t.unit} | ${t.goal} | ${t.met ? "yes" : "**no**"} |`),
  );
  return `${lines.join("\n")}\n`;
}
