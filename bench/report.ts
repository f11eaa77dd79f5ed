// What a run found, as JSON (everything measured) and as the Markdown tables that
// docs/benchmarks.md shows for the latest run (withLatestResults puts them there).
// Ratios are the point: both sides of each are measured in the same run. A run of some
// parts only (--only) has only their measurements, ratios, tables and targets.
import type { DirectAndPooled } from "./direct-and-pooled.ts";
import { LIMITER_CONCURRENCIES, type LimiterResults } from "./external.ts";
import { LARGE_TENANT, RESERVATIONS_PER_TENANT } from "./fixtures.ts";
import { type LargeTenantResult, type LargeTenantRoute, largeTenantRoutes, type MeasuredCount, measuredCounts } from "./large-tenant.ts";
import { type Channel, channels, type NotificationLatencyResult } from "./notification-latency.ts";
import type { SqlLoadResult } from "./pgbench.ts";
import type { Pauses } from "./pauses.ts";
import type { BesideDrain, PipelineBeside, PipelineResult } from "./pipeline.ts";
import type { WebhooksResult } from "./webhooks.ts";
import type { RuntimeUse } from "./drain.ts";
import { CONCURRENCIES, type ReadRoute, readRoutes } from "./reads.ts";
import { listKeptItsPlan, type SellingResult } from "./selling.ts";
import type { WriteResults } from "./writes.ts";
import type { LoadResult } from "./wrk.ts";

// The parts a run can be limited to (bench/run.ts --only), in the order they run.
// `reads` is items 1 and 2, `scale` item 5.
export const PARTS = [
  "scale", "reads", "direct-and-pooled", "limiter", "writes", "pipeline", "webhooks", "large-tenant", "selling", "latency",
] as const;
export type Part = (typeof PARTS)[number];

export type RouteResults = { api: LoadResult[]; sqlCeiling: SqlLoadResult[]; httpCeiling: LoadResult[]; bodyBytes: number };

// The same reads, loaded the same way, on either side of seeding tenants 2-1000: before
// it, right after it, and once they are dropped again, so that a machine growing busier or
// quieter over those minutes weighs on both sides alike.
export type ScaleReads = {
  oneTenantBefore: Record<ReadRoute, LoadResult[]>;
  thousandTenants: Record<ReadRoute, LoadResult[]>;
  oneTenantAfter: Record<ReadRoute, LoadResult[]>;
};

export type Measurements = {
  reads?: Record<ReadRoute, RouteResults>;
  // The same reads from two api instances, connected directly and through the pooler.
  directAndPooled?: DirectAndPooled;
  // Item 5: item 1's reads from the API alone, with one bench tenant, with 1,000, and with
  // one again.
  scale?: ScaleReads;
  writes?: WriteResults;
  pipeline?: PipelineResult;
  // The pipeline drained by this tree's worker and an earlier revision's, side by side (--before).
  pipelineBeside?: PipelineBeside;
  // Item 8: outbound webhooks, beside the pipeline.
  webhooks?: WebhooksResult;
  // Item 7: an external read with and without the rate limiter.
  limiter?: LimiterResults;
  // Item 9: filtered lists of a tenant with 100,000 reservations beside the read tenant's,
  // and what their total costs.
  largeTenant?: LargeTenantResult;
  // Item 11: selling by date on the large tenant: plans without fresh statistics,
  // availability beside a read by id, a bulk calendar update beside one write, the race.
  selling?: SellingResult;
  // Item 10: from a check-in's commit to the provider, on the workers' deployed schedule.
  notificationLatency?: NotificationLatencyResult;
};

export type RunInfo = {
  date: string;
  commit: string;
  // What ran: every part, or those --only named.
  parts: Part[];
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
    apiShareOfLowerCeiling?: Record<ReadRoute, number[]>;
    // Mean latency with 1,000 tenants over the same with one, per route and concurrency.
    scale?: Record<ReadRoute, number[]>;
    // Req/s through the pooler over req/s connected directly, per route and concurrency.
    pooledOverDirect?: Record<ReadRoute, number[]>;
    // This tree's pooled req/s over an earlier revision's, side by side (--before).
    afterOverBefore?: Record<ReadRoute, number[]>;
    // 1 - check-ins/s with the trigger over check-ins/s without it.
    triggerCost?: number;
    pipelineShareOfPgmqCeiling?: number;
    // This tree's worker's notifications a second over an earlier revision's, all rounds
    // of the side-by-side drains taken together (--before).
    pipelineAfterOverBefore?: number;
    // The worst run's CPU time over the local Edge Runtime's headroom between its soft CPU
    // limit (a worker is retired) and its hard one (killed), per worker function drained.
    runCpuShareOfHeadroom?: { notifications?: number; webhooks?: number };
    // 1 - the external read's SQL tx/s with the rate limiter over those without, per concurrency.
    limiterCost?: number[];
    // The large tenant's mean latency over the read tenant's, per count asked for and route, at 32 connections.
    largeOverSmall?: Record<MeasuredCount, Record<LargeTenantRoute, number>>;
    // The share of the large tenant's list statement the count takes, per route (EXPLAIN ANALYZE).
    countShare?: Record<LargeTenantRoute, number>;
    // Selling by date: each query's time before ANALYZE over after it; availability's p50
    // over a read by id's and its own p99 over its p50; the bulk calendar update over one write.
    staleOverFresh?: { list: number; availability: number };
    availabilityOverReadById?: number;
    availabilityTail?: number;
    bulkCalendarOverSingleWrite?: number;
    ariOverExternalReadById?: number;
    channelBookingOverFrontDesk?: number;
  };
  targets: Target[];
  measurements: Measurements;
};

const AT_32 = CONCURRENCIES.indexOf(32);
const routes: ReadRoute[] = ["list", "get"];

function lowerCeiling(route: RouteResults, index: number): number {
  return Math.min(route.sqlCeiling[index]!.transactionsPerSecond, route.httpCeiling[index]!.requestsPerSecond);
}

// The values of a record of routes, in a fixed order.
const each = <K extends string, V>(keys: readonly K[], value: (key: K) => V) =>
  Object.fromEntries(keys.map((key) => [key, value(key)])) as Record<K, V>;

// The one-tenant side of a scale point: the mean latency of its runs before and after
// the 1,000 tenants' run.
function oneTenantMeanMs(scale: ScaleReads, route: ReadRoute, i: number): number {
  return (scale.oneTenantBefore[route][i]!.meanMs + scale.oneTenantAfter[route][i]!.meanMs) / 2;
}

// A drain's runs as the local Edge Runtime counted them.
function runtimeLine(use: RuntimeUse): string {
  return `Under the local Edge Runtime: ${use.runs} runs, ${fixed(use.cpuMs)} ms of CPU in all, the worst run ${fixed(use.worstRunCpuMs)} ms ` +
    `against ${fixed(use.cpuHardMs - use.cpuSoftMs)} ms between the soft and hard limits; workers retired at the soft limit: ${use.retired}, ` +
    `killed: ${use.killed}.`;
}

// Notifications a second over a set of drains of the same load: all of them over all their time.
function drainRate(drains: BesideDrain[]): number {
  const seconds = drains.reduce((sum, drain) => sum + drain.drainSeconds, 0);
  return drains.reduce((sum, drain) => sum + drain.notificationsPerSecond * drain.drainSeconds, 0) / seconds;
}

export function buildReport(info: RunInfo, measurements: Measurements, durationSeconds: number): Report {
  const { reads, directAndPooled, scale, writes, pipeline, pipelineBeside, webhooks, limiter, largeTenant, selling, notificationLatency } =
    measurements;
  const ratios: Report["ratios"] = {};
  if (reads) {
    ratios.apiShareOfLowerCeiling = each(routes, (route) =>
      CONCURRENCIES.map((_, i) => reads[route].api[i]!.requestsPerSecond / lowerCeiling(reads[route], i)));
  }
  if (scale) {
    ratios.scale = each(routes, (route) => CONCURRENCIES.map((_, i) => scale.thousandTenants[route][i]!.meanMs / oneTenantMeanMs(scale, route, i)));
  }
  if (directAndPooled) {
    ratios.pooledOverDirect = each(routes, (route) =>
      CONCURRENCIES.map((_, i) => directAndPooled[route].pooled[i]!.requestsPerSecond / directAndPooled[route].direct[i]!.requestsPerSecond));
    if (directAndPooled.before) {
      ratios.afterOverBefore = each(routes, (route) =>
        CONCURRENCIES.map((_, i) => directAndPooled[route].pooled[i]!.requestsPerSecond / directAndPooled[route].before![i]!.requestsPerSecond));
    }
  }
  if (writes) ratios.triggerCost = 1 - writes.checkIn.requestsPerSecond / writes.checkInWithoutTrigger.requestsPerSecond;
  if (pipeline) ratios.pipelineShareOfPgmqCeiling = pipeline.notificationsPerSecond / pipeline.pgmqCeiling.messagesPerSecond;
  if (pipelineBeside) ratios.pipelineAfterOverBefore = drainRate(pipelineBeside.after) / drainRate(pipelineBeside.before);
  const headroomShare = (use: RuntimeUse) => use.worstRunCpuMs / (use.cpuHardMs - use.cpuSoftMs);
  if (pipeline || webhooks) {
    ratios.runCpuShareOfHeadroom = {
      ...(pipeline ? { notifications: headroomShare(pipeline.runtime) } : {}),
      ...(webhooks ? { webhooks: headroomShare(webhooks.runtime) } : {}),
    };
  }
  if (limiter) {
    ratios.limiterCost = LIMITER_CONCURRENCIES.map((_, i) =>
      1 - limiter.sqlWith[i]!.transactionsPerSecond / limiter.sqlWithout[i]!.transactionsPerSecond
    );
  }
  if (largeTenant) {
    ratios.largeOverSmall = each(measuredCounts, (count) =>
      each(largeTenantRoutes, (route) => largeTenant.routes[route].byCount[count].meanRatio));
    ratios.countShare = each(largeTenantRoutes, (route) => largeTenant.count[route].share.statement);
  }
  if (selling) {
    const { stale, fresh } = selling.statistics;
    ratios.staleOverFresh = {
      list: stale.list.medianMs / fresh.list.medianMs,
      availability: stale.availability.medianMs / fresh.availability.medianMs,
    };
    ratios.availabilityOverReadById = selling.availability.p50Ms / selling.readById.p50Ms;
    ratios.availabilityTail = selling.availability.p99Ms / selling.availability.p50Ms;
    ratios.bulkCalendarOverSingleWrite = selling.bulkCalendar.medianMs / selling.singleWrite.medianMs;
    ratios.ariOverExternalReadById = selling.channels.ari.p50Ms / selling.channels.externalReadById.p50Ms;
    ratios.channelBookingOverFrontDesk = selling.channels.channelWrite.medianMs / selling.channels.frontDeskWrite.medianMs;
  }

  const worst = (values: number[], pick: "min" | "max") => pick === "min" ? Math.min(...values) : Math.max(...values);
  const targets: Target[] = [];
  if (reads && ratios.apiShareOfLowerCeiling) {
    const shareAt32 = worst(routes.map((route) => ratios.apiShareOfLowerCeiling![route][AT_32]!), "min");
    targets.push({
      name: "API reads, share of the lower ceiling at 32 connections (worse route)",
      measured: shareAt32 * 100, unit: "%", goal: "≥ 75 %", met: shareAt32 >= 0.75,
    });
  }
  // Every read and write point at 32 connections: a p99 far above its p50 is a stall.
  const tails = [
    ...(reads ? routes.map((route) => reads[route].api[AT_32]!) : []),
    ...(writes ? [writes.patchGuest, writes.checkIn] : []),
  ];
  if (tails.length > 0) {
    const tail = worst(tails.map((point) => point.p99Ms / point.p50Ms), "max");
    targets.push({ name: "Tails: p99 over p50 at 32 connections (worst read or write)", measured: tail, unit: "×", goal: "≤ 3", met: tail <= 3 });
  }
  if (ratios.triggerCost !== undefined) {
    targets.push({ name: "Cost of the notification trigger on check-in", measured: ratios.triggerCost * 100, unit: "%", goal: "< 15 %", met: ratios.triggerCost < 0.15 });
  }
  if (pipeline && ratios.pipelineShareOfPgmqCeiling !== undefined) {
    const share = ratios.pipelineShareOfPgmqCeiling;
    targets.push({ name: "Notification pipeline, share of pgmq's ceiling in the same run", measured: share * 100, unit: "%", goal: "≥ 25 %", met: share >= 0.25 });
  }
  if (ratios.runCpuShareOfHeadroom) {
    const share = worst(Object.values(ratios.runCpuShareOfHeadroom), "max");
    targets.push({
      name: "Worker runs under the Edge Runtime's limits: the worst run's CPU over the headroom between the soft and hard limits (worse worker)",
      measured: share * 100, unit: "%", goal: "≤ 75 %", met: share <= 0.75,
    });
  }
  if (ratios.scale) {
    const scaleAt32 = worst(routes.map((route) => ratios.scale![route][AT_32]!), "max");
    targets.push({ name: "Scale: mean latency, 1,000 tenants over 1, at 32 connections (worse route)", measured: scaleAt32, unit: "×", goal: "< 1.15", met: scaleAt32 < 1.15 });
  }
  if (ratios.largeOverSmall) {
    // The default's exact total, and the documented way to skip it.
    const asked: Record<MeasuredCount, string> = { exact: "exact total (the default)", none: "Prefer: count=none" };
    for (const count of measuredCounts) {
      const largeOverSmall = worst(largeTenantRoutes.map((route) => ratios.largeOverSmall![count][route]), "max");
      targets.push({
        name: `Large tenant: mean latency, 100,000 reservations over 1,000, at 32 connections, ${asked[count]} (worst route)`,
        measured: largeOverSmall, unit: "×", goal: "≤ 1.5", met: largeOverSmall <= 1.5,
      });
    }
  }
  if (selling) {
    const stale = Math.max(ratios.staleOverFresh!.list, ratios.staleOverFresh!.availability);
    targets.push({
      name: "Plans without fresh statistics: the large tenant's March list and availability, before ANALYZE over after (worse); " +
        `the list's plan ${listKeptItsPlan(selling.statistics) ? "the same" : "**changed**"}`,
      measured: stale, unit: "×", goal: "≤ 1.5, the same plan", met: stale <= 1.5 && listKeptItsPlan(selling.statistics),
    });
    targets.push({
      name: `Availability, 100 units, 10 room types, 5 plans, 14 nights: p50 over a read by id's, at ${selling.connections} connections`,
      measured: ratios.availabilityOverReadById!, unit: "×", goal: "≤ 3", met: ratios.availabilityOverReadById! <= 3,
    });
    targets.push({
      name: "Availability: p99 over its p50", measured: ratios.availabilityTail!, unit: "×", goal: "≤ 3", met: ratios.availabilityTail! <= 3,
    });
    targets.push({
      name: "Bulk calendar update, 365 days × 10 plans, over one reservation write (medians)",
      measured: ratios.bulkCalendarOverSingleWrite!, unit: "×", goal: "≤ 3", met: ratios.bulkCalendarOverSingleWrite! <= 3,
    });
    targets.push({
      name: `ARI, 10 room types × 5 plans × 365 days: p50 over an external read by id's, at ${selling.connections} connections`,
      measured: ratios.ariOverExternalReadById!, unit: "×", goal: "≤ 3", met: ratios.ariOverExternalReadById! <= 3,
    });
    targets.push({
      name: "A channel's booking (guest found or added, reference checked) over the front desk's booking (medians)",
      measured: ratios.channelBookingOverFrontDesk!, unit: "×", goal: "≤ 1.5", met: ratios.channelBookingOverFrontDesk! <= 1.5,
    });
    targets.push({
      name: `Booking race under load: stays stored of ${selling.race.bookings} bookings of the last room`,
      measured: selling.race.stored, unit: "", goal: "= 1", met: selling.race.stored === 1 && selling.race.other === 0,
    });
  }
  if (notificationLatency) {
    // NaN (nothing delivered on a channel) is not below any goal.
    const p99 = worst(providerChannels.map((channel) => notificationLatency.byChannel[channel].fromTransaction.p99Ms), "max") / 1000;
    targets.push({ name: "Notification latency: check-in to the provider's acceptance, p99 (worse of email and SMS)", measured: p99, unit: "s", goal: "< 5 s", met: p99 < 5 });
  }

  const sumErrors = (results: { errors: number }[]) => results.reduce((sum, result) => sum + result.errors, 0);
  const errors = routes.reduce((sum, route) =>
    sum + sumErrors([...(reads?.[route].api ?? []), ...(reads?.[route].httpCeiling ?? []), ...(scale?.oneTenantBefore[route] ?? []),
      ...(scale?.thousandTenants[route] ?? []), ...(scale?.oneTenantAfter[route] ?? []),
      ...(directAndPooled?.[route].direct ?? []), ...(directAndPooled?.[route].pooled ?? []),
      ...(directAndPooled?.[route].before ?? []), ...(reads?.[route].sqlCeiling ?? [])]), 0) +
    sumErrors(writes ? [writes.patchGuest, writes.checkIn, writes.checkInWithoutTrigger] : []) +
    (pipeline?.errors ?? 0) + sumErrors([...(pipelineBeside?.after ?? []), ...(pipelineBeside?.before ?? [])]) +
    (webhooks?.errors ?? 0) +
    sumErrors(limiter ? [...limiter.api, ...limiter.sqlWith, ...limiter.sqlWithout] : []) +
    sumErrors(largeTenant
      ? largeTenantRoutes.flatMap((route) => [
        ...measuredCounts.flatMap((count) => largeTenant.routes[route].byCount[count].runs.map((run) => run.result)),
        largeTenant.count[route].pgbench.withCount, largeTenant.count[route].pgbench.withoutCount,
      ])
      : []) +
    sumErrors(selling ? [...selling.runs.map((run) => run.result), selling.race.underLoad, ...selling.channels.runs.map((run) => run.result)] : []) +
    (notificationLatency?.errors ?? 0);
  return { ...info, durationSeconds, errors, ratios, targets, measurements };
}

// The channels with a provider, whose acceptance ends the latency the target is about.
const providerChannels: Channel[] = ["email", "sms"];

const fixed = (value: number, digits = 0) => value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const statementMs = (pauses: Pauses) => pauses.databaseMs === null ? "not watched" : fixed(pauses.databaseMs);
const percent = (ratio: number) => `${fixed(ratio * 100)} %`;

// docs/benchmarks.md with its latest results replaced by the run `name`'s tables: the
// section between its two markers, the first of which names the run (its row in
// bench/results/history.md).
export const LATEST_RESULTS_START = /<!-- bench: the latest results, run ([^ ]+) \(bench\/results\/latest\.md\); npm run bench rewrites this section -->\n/;
export const LATEST_RESULTS_END = "<!-- bench: end of the latest results -->\n";

export function withLatestResults(page: string, name: string, table: string): string {
  const start = LATEST_RESULTS_START.exec(page);
  const end = page.indexOf(LATEST_RESULTS_END);
  if (!start || end < start.index) throw new Error("docs/benchmarks.md has no latest-results markers");
  const marker = `<!-- bench: the latest results, run ${name} (bench/results/latest.md); npm run bench rewrites this section -->\n`;
  return `${page.slice(0, start.index)}${marker}${table.replace(/\n*$/, "\n")}${page.slice(end)}`;
}

// bench/results keeps the latest full run whole (latest.json, latest.md) and every full
// run as one row of history.md: when it ran, at which commit, and its targets.
export const HISTORY_HEADER = "# Runs of npm run bench\n\n" +
  "One row per full run, oldest first; the latest run's tables are in latest.md, its data in latest.json.\n\n" +
  "| run | commit | cores | seconds | errors | targets met | each target: measured (goal) |\n" +
  "|---|---|--:|--:|--:|--:|---|\n";

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

export function historyRow(report: Report, name: string): string {
  const met = report.targets.filter((target) => target.met).length;
  const targets = report.targets.map((target) =>
    `${target.name}: ${fixed(target.measured, target.unit === "%" ? 1 : 2)}${target.unit === "%" ? " %" : ` ${target.unit}`} (${target.goal})`
  ).join("; ");
  return `| ${name} | \`${report.commit}\`${report.dirty ? " (uncommitted changes)" : ""} | ${report.cores} | ` +
    `${fixed(report.durationSeconds)} | ${report.errors} | ${met} of ${report.targets.length} | ${cell(targets)} |\n`;
}

// The history with the run's row added, or put in place of the row of a run of the same name.
export function withHistoryRow(history: string, name: string, row: string): string {
  const body = history.startsWith(HISTORY_HEADER) ? history.slice(HISTORY_HEADER.length) : "";
  const rows = body.split("\n").filter((line) => line.startsWith("| ") && !line.startsWith(`| ${name} |`));
  return HISTORY_HEADER + [...rows, row.replace(/\n*$/, "")].join("\n") + "\n";
}

const seconds = (ms: number) => Number.isNaN(ms) ? "–" : fixed(ms / 1000, 2);

const channelLabels: Record<Channel, string> = {
  email: "email (to SendGrid's acceptance)",
  sms: "SMS (to the SMS provider's acceptance)",
  in_app: "in-app (to `sent`, in the inbox)",
};

export function markdown(report: Report): string {
  const { reads, directAndPooled, scale, writes, pipeline, pipelineBeside, webhooks, limiter, largeTenant, selling, notificationLatency } =
    report.measurements;
  const { ratios } = report;
  const lines: string[] = [];
  const partial = report.parts.length < PARTS.length;
  lines.push(
    `Run ${report.date} at commit \`${report.commit}\`${report.dirty ? " (with uncommitted changes)" : ""}, ${report.cores} cores, ` +
      `load average ${report.loadAverageAtStart.map((l) => l.toFixed(2)).join(" ")} at the start, ${report.secondsPerPoint} s a point, ` +
      `${fixed(report.durationSeconds)} s in all. Errors: **${report.errors}**.` +
      (partial ? ` Only these parts ran: ${report.parts.join(", ")}.` : ""),
  );
  if (reads && ratios.apiShareOfLowerCeiling) {
    const share = ratios.apiShareOfLowerCeiling;
    lines.push(
      "",
      `**API reads** (one tenant among ${fixed(report.tenants)} with ${fixed(report.reservationsPerTenant)} reservations each; ceilings measured in the same run)`,
      "",
      "| route | conn | API req/s | p50 ms | p99 ms | errors | longest pause ms: machine, statement | SQL ceiling tx/s | HTTP ceiling req/s | API / lower ceiling |",
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    );
    for (const route of routes) {
      CONCURRENCIES.forEach((connections, i) => {
        const api = reads[route].api[i]!;
        lines.push(
          `| ${readRoutes[route].label} | ${connections} | ${fixed(api.requestsPerSecond)} | ${fixed(api.p50Ms, 1)} | ${fixed(api.p99Ms, 1)} | ` +
            `${api.errors} | ${fixed(api.pauses.machineMs)}, ${statementMs(api.pauses)} | ${fixed(reads[route].sqlCeiling[i]!.transactionsPerSecond)} | ${fixed(reads[route].httpCeiling[i]!.requestsPerSecond)} | ` +
            `${percent(share[route][i]!)} |`,
        );
      });
    }
  }
  // Two instances' reads side by side at each point: `first` and `second` name the
  // columns, the ratio is the second's req/s over the first's.
  const sideBySide = (
    title: string,
    [first, second]: [string, string],
    results: (route: ReadRoute) => [LoadResult[], LoadResult[]],
    ratio: Record<ReadRoute, number[]>,
  ) => {
    lines.push(
      "",
      title,
      "",
      `| route | conn | ${first} req/s | p50 ms | p99 ms | ${second} req/s | p50 ms | p99 ms | errors | ${second} / ${first} |`,
      "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    );
    for (const route of routes) {
      const [firsts, seconds] = results(route);
      CONCURRENCIES.forEach((connections, i) => {
        const [a, b] = [firsts[i]!, seconds[i]!];
        lines.push(
          `| ${readRoutes[route].label} | ${connections} | ${fixed(a.requestsPerSecond)} | ${fixed(a.p50Ms, 1)} | ${fixed(a.p99Ms, 1)} | ` +
            `${fixed(b.requestsPerSecond)} | ${fixed(b.p50Ms, 1)} | ${fixed(b.p99Ms, 1)} | ${a.errors + b.errors} | ${percent(ratio[route][i]!)} |`,
        );
      });
    }
  };
  if (directAndPooled && ratios.pooledOverDirect) {
    sideBySide(
      "**Direct and through the pooler** (the same reads from two api instances the bench starts from `supabase/functions/api/index.ts`, " +
        "loaded on their own ports without the gateway, side by side at each point: one connected directly with prepared statements, " +
        "as with `SUPABASE_DB_URL` alone; one through PgBouncer in transaction mode without them, as the stack's functions and a hosted project's should run)",
      ["direct", "pooled"],
      (route) => [directAndPooled[route].direct, directAndPooled[route].pooled],
      ratios.pooledOverDirect,
    );
  }
  if (directAndPooled?.before && ratios.afterOverBefore) {
    sideBySide(
      `**Before and after** (the same reads, through the pooler, from revision \`${directAndPooled.before}\`'s api instance and this tree's, ` +
        "side by side at each point)",
      ["before", "after"],
      (route) => [directAndPooled[route].before!, directAndPooled[route].pooled],
      ratios.afterOverBefore,
    );
  }
  if (scale && ratios.scale) {
    const ratio = ratios.scale;
    const point = (result: LoadResult) => `${fixed(result.requestsPerSecond)}, ${fixed(result.meanMs, 2)}`;
    lines.push(
      "",
      "**Scale** (the API's reads alone, while the database holds one bench tenant, then 1,000, then one again; the ratio is the 1,000 tenants' mean latency over the mean of the two one-tenant runs')",
      "",
      "| route | conn | 1 tenant: req/s, mean ms | 1,000 tenants: req/s, mean ms | 1 tenant again: req/s, mean ms | latency ratio |",
      "|---|--:|--:|--:|--:|--:|",
    );
    for (const route of routes) {
      CONCURRENCIES.forEach((connections, i) => {
        lines.push(
          `| ${readRoutes[route].label} | ${connections} | ${point(scale.oneTenantBefore[route][i]!)} | ` +
            `${point(scale.thousandTenants[route][i]!)} | ${point(scale.oneTenantAfter[route][i]!)} | ${fixed(ratio[route][i]!, 2)} |`,
        );
      });
    }
  }
  if (writes && ratios.triggerCost !== undefined) {
    lines.push(
      "",
      "**Writes** (32 connections, random bench tenants; check-ins ran with, without, without and with the trigger, each side's two runs taken together, their p50 and p99 the worse of the two)",
      "",
      "| route | req/s | p50 ms | p99 ms | errors | longest pause: machine ms | longest statement ms (its wait) |",
      "|---|--:|--:|--:|--:|--:|--:|",
      ...([
        ["PATCH /v1/guests/{id}", writes.patchGuest],
        ["POST /v1/reservations/{id}/check-in", writes.checkIn],
        ["the same, notification trigger disabled", writes.checkInWithoutTrigger],
      ] as const).map(([label, r]) =>
        `| ${label} | ${fixed(r.requestsPerSecond)} | ${fixed(r.p50Ms, 1)} | ${fixed(r.p99Ms, 1)} | ${r.errors} | ` +
        `${fixed(r.pauses.machineMs)} | ${statementMs(r.pauses)}${r.pauses.databaseWait ? ` (${r.pauses.databaseWait})` : ""} |`
      ),
      "",
      `Trigger cost: ${percent(ratios.triggerCost)} of check-in throughput.`,
    );
  }
  if (pipeline && ratios.pipelineShareOfPgmqCeiling !== undefined) {
    lines.push(
      "",
      `**Notification pipeline**: ${fixed(pipeline.checkIns)} check-ins across 100 tenants, each reaching the guest by email and SMS and ` +
        `three staff in-app: ${fixed(pipeline.notifications)} notifications (${fixed(pipeline.byChannel.email)} email, ` +
        `${fixed(pipeline.byChannel.sms)} SMS, ${fixed(pipeline.byChannel.in_app)} in-app), enqueued in ${fixed(pipeline.enqueueSeconds, 2)} s, ` +
        `drained by the worker in ${fixed(pipeline.drainSeconds, 2)} s (${pipeline.workerRuns} calls): **${fixed(pipeline.notificationsPerSecond)} /s**, ` +
        `errors ${pipeline.errors}. pgmq's own ceiling (send, read, delete in SQL): ${fixed(pipeline.pgmqCeiling.messagesPerSecond)} /s; ` +
        `the pipeline runs at ${percent(ratios.pipelineShareOfPgmqCeiling)} of it. ${runtimeLine(pipeline.runtime)}`,
    );
  }
  if (pipelineBeside && ratios.pipelineAfterOverBefore !== undefined) {
    const drains = (list: BesideDrain[]) => list.map((drain) => `${fixed(drain.drainSeconds, 2)} s`).join(", ");
    lines.push(
      "",
      `**Pipeline, before and after**: the same notifications drained by this tree's worker and by revision ${pipelineBeside.revision}'s, ` +
        `each a process of its own through the pooler, in turns over ${pipelineBeside.rounds} rounds: this tree's in ${drains(pipelineBeside.after)}, ` +
        `the earlier one's in ${drains(pipelineBeside.before)}; this tree's rate is **${percent(ratios.pipelineAfterOverBefore)}** of the earlier one's.`,
    );
  }
  if (webhooks) {
    lines.push(
      "",
      `**Outbound webhooks**: ${fixed(webhooks.deliveries)} signed deliveries to 100 tenants' endpoints on the local receiver, ` +
        `enqueued in ${fixed(webhooks.enqueueSeconds, 2)} s, drained by the webhooks worker in ${fixed(webhooks.drainSeconds, 2)} s ` +
        `(${webhooks.workerRuns} calls): **${fixed(webhooks.deliveriesPerSecond)} /s**, errors ${webhooks.errors}` +
        (pipeline ? `; ${percent(webhooks.deliveriesPerSecond / pipeline.notificationsPerSecond)} of the notification pipeline's rate.` : ".") +
        ` ${runtimeLine(webhooks.runtime)}`,
    );
  }
  if (limiter && ratios.limiterCost) {
    const limiterCost = ratios.limiterCost;
    lines.push(
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
      `Limiter cost: ${LIMITER_CONCURRENCIES.map((connections, i) => `${percent(limiterCost[i]!)} at ${connections}`).join(", ")} ` +
        "connections of the external read's SQL throughput.",
    );
  }
  if (largeTenant) lines.push(...largeTenantSection(largeTenant));
  if (selling) lines.push(...sellingSection(selling));
  if (notificationLatency) lines.push(...latencySection(notificationLatency));
  lines.push(
    "",
    "**Targets**",
    "",
    "| target | measured | goal | met |",
    "|---|--:|--:|:-:|",
    ...report.targets.map((t) => `| ${t.name} | ${fixed(t.measured, { "×": 2, ms: 1, s: 2 }[t.unit] ?? 0)} ${t.unit} | ${t.goal} | ${t.met ? "yes" : "**no**"} |`),
  );
  return `${lines.join("\n")}\n`;
}

function largeTenantSection(large: LargeTenantResult): string[] {
  const lines = [
    "",
    `**A large tenant** (${fixed(large.reservations)} reservations, ${fixed(large.units)} units and ${fixed(large.guests)} guests, ` +
      `beside the ${fixed(RESERVATIONS_PER_TENANT)} of the read tenant and the other bench tenants; ${large.connections} connections, ` +
      "small, large, large, small, each side's two runs taken together, their p50 and p99 the worse of the two; " +
      "once with the exact total, the default, once with `Prefer: count=none`; matches: the list's `total` for each tenant)",
    "",
    "| route | count | matches small / large | small req/s | p50 ms | p99 ms | large req/s | p50 ms | p99 ms | errors | large / small mean | large / small p50 |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const route of largeTenantRoutes) {
    const r = large.routes[route];
    for (const count of measuredCounts) {
      const side = r.byCount[count];
      lines.push(
        `| ${r.label} | ${count} | ${fixed(r.matches.small)} / ${fixed(r.matches.large)} | ${fixed(side.small.requestsPerSecond)} | ` +
          `${fixed(side.small.p50Ms, 1)} | ${fixed(side.small.p99Ms, 1)} | ${fixed(side.large.requestsPerSecond)} | ${fixed(side.large.p50Ms, 1)} | ` +
          `${fixed(side.large.p99Ms, 1)} | ${side.small.errors + side.large.errors} | ${fixed(side.meanRatio, 2)} | ${fixed(side.p50Ratio, 2)} |`,
      );
    }
  }
  lines.push(
    "",
    `**What the total costs on the large tenant** (tenant ${LARGE_TENANT.number}: each route's page query as the API builds it, under the request's ` +
      "context, for the exact total and for `count=none`: the statement's execution time by EXPLAIN ANALYZE, the median of " +
      `${large.count.dates.explain.withCountMs.length} runs each; the whole transaction, context included, with pgbench, one client; ` +
      "the plans are in the run's JSON)",
    "",
    "| route | statement with count ms | without ms | count's share | transaction with count tx/s | without tx/s | count's share |",
    "|---|--:|--:|--:|--:|--:|--:|",
  );
  for (const route of largeTenantRoutes) {
    const c = large.count[route];
    lines.push(
      `| ${c.label} | ${fixed(c.explain.medianWithCountMs, 2)} | ${fixed(c.explain.medianWithoutCountMs, 2)} | ${percent(c.share.statement)} | ` +
        `${fixed(c.pgbench.withCount.transactionsPerSecond)} | ${fixed(c.pgbench.withoutCount.transactionsPerSecond)} | ${percent(c.share.transaction)} |`,
    );
  }
  lines.push("", "Where the time goes (EXPLAIN ANALYZE, large tenant):", "");
  for (const route of largeTenantRoutes) {
    const c = large.count[route];
    lines.push(`- ${c.label}, with the count: ${c.outline.withCount}; without: ${c.outline.withoutCount}`);
  }
  return lines;
}

function sellingSection(selling: SellingResult): string[] {
  const { stale, fresh } = selling.statistics;
  const row = (label: string, result: LoadResult) =>
    `| ${label} | ${fixed(result.requestsPerSecond)} | ${fixed(result.p50Ms, 1)} | ${fixed(result.p99Ms, 1)} | ${result.errors} |`;
  return [
    "",
    `**Selling by date** (the large tenant's first property: 100 units of 10 room types, 5 rate plans with their own days, ` +
      "four years of stays)",
    "",
    "Plans without fresh statistics: right after the bulk load and a VACUUM, before ANALYZE, and after it (EXPLAIN ANALYZE under the request's " +
      `context, the median of ${fresh.list.runsMs.length} runs):`,
    "",
    "| query | before ANALYZE ms | after ms | before / after |",
    "|---|--:|--:|--:|",
    `| GET /v1/reservations?from=2026-03-01&to=2026-04-01 (large tenant) | ${fixed(stale.list.medianMs, 2)} | ${fixed(fresh.list.medianMs, 2)} | ` +
    `${fixed(stale.list.medianMs / fresh.list.medianMs, 2)} |`,
    `| availability, 14 nights, 2 adults | ${fixed(stale.availability.medianMs, 2)} | ${fixed(fresh.availability.medianMs, 2)} | ` +
    `${fixed(stale.availability.medianMs / fresh.availability.medianMs, 2)} |`,
    "",
    `- the list before ANALYZE: ${stale.list.outline}`,
    `- after: ${fresh.list.outline}`,
    `- the same plan node by node: ${listKeptItsPlan(selling.statistics) ? "yes" : "**no**"}`,
    "",
    `Availability beside a read by id (${selling.connections} connections; availability, by id, by id, availability, each side's two runs ` +
      "taken together):",
    "",
    "| route | req/s | p50 ms | p99 ms | errors |",
    "|---|--:|--:|--:|--:|",
    row("GET /v1/availability (14 nights, 2 adults)", selling.availability),
    row("GET /v1/reservations/{id}", selling.readById),
    "",
    `A bulk calendar update (PATCH /v1/rate-calendar, ${selling.bulkCalendar.days} days × ${selling.bulkCalendar.plans} plans) took ` +
      `${fixed(selling.bulkCalendar.medianMs, 1)} ms (median of ${selling.bulkCalendar.runsMs.length}), one reservation written ` +
      `(POST /v1/reservations, booked by room type and priced) ${fixed(selling.singleWrite.medianMs, 1)} ms, in turns.`,
    "",
    `The booking race under load: ${selling.race.bookings} bookings at once of a room type's last room while availability was loaded: ` +
      `${selling.race.stored} stored, ${selling.race.refused} refused \`no-availability\`, ${selling.race.other} otherwise, in ` +
      `${fixed(selling.race.ms)} ms; availability beside it ${fixed(selling.race.underLoad.requestsPerSecond)} req/s, p50 ` +
      `${fixed(selling.race.underLoad.p50Ms, 1)} ms, p99 ${fixed(selling.race.underLoad.p99Ms, 1)} ms.`,
    "",
    `What a channel manager asks, with an API key (${selling.connections} connections; ARI, by id, by id, ARI, each side's two runs ` +
      `taken together): a year of the first property's availability, rates and restrictions, ` +
      `${fixed(selling.channels.ariBytes / 1024, 1)} KiB with a value a day, beside an external read by id:`,
    "",
    "| route | req/s | p50 ms | p99 ms | errors |",
    "|---|--:|--:|--:|--:|",
    row("GET /v1/external/properties/{id}/ari (365 days)", selling.channels.ari),
    row("GET /v1/external/reservations/{id}", selling.channels.externalReadById),
    "",
    `A stay a channel books (POST /v1/external/properties/{id}/reservations: the reference locked and looked up, the guest found ` +
      `or added, the stay priced) took ${fixed(selling.channels.channelWrite.medianMs, 1)} ms (median of ` +
      `${selling.channels.channelWrite.runsMs.length}), the front desk's (POST /v1/reservations) ` +
      `${fixed(selling.channels.frontDeskWrite.medianMs, 1)} ms, in turns.`,
  ];
}

function latencySection(latency: NotificationLatencyResult): string[] {
  return [
    "",
    `**Notification latency** (${fixed(latency.checkIns)} check-ins through the API at ${fixed(latency.checkInsPerSecond)} /s ` +
      `(sent over ${fixed(latency.sendingSeconds, 1)} s) across tenants 2–1000, the workers on their schedule as configured, ` +
      `a run every ${latency.workerEverySeconds} s; from the check-in's transaction (its notification's \`created_at\`) to the provider's ` +
      "acceptance as its double recorded it, or for in-app to the notification's `sent_at`)",
    "",
    "| channel | notifications | delivered | p50 s | p99 s | max s |",
    "|---|--:|--:|--:|--:|--:|",
    ...channels.map((channel) => {
      const c = latency.byChannel[channel];
      return `| ${channelLabels[channel]} | ${fixed(c.notifications)} | ${fixed(c.delivered)} | ${seconds(c.fromTransaction.p50Ms)} | ` +
        `${seconds(c.fromTransaction.p99Ms)} | ${seconds(c.fromTransaction.maxMs)} |`;
    }),
    "",
    `Check-ins answered 2xx: ${fixed(latency.checkInAnswers.ok)} of ${fixed(latency.checkIns)}, p50 ${fixed(latency.checkInAnswers.p50Ms, 1)} ms, ` +
      `p99 ${fixed(latency.checkInAnswers.p99Ms, 1)} ms. Counted from each check-in's 2xx instead, after its commit: p99 ` +
      `${providerChannels.map((channel) => `${seconds(latency.byChannel[channel].fromResponse.p99Ms)} s (${channel === "sms" ? "SMS" : channel})`).join(", ")}. ` +
      `Errors ${latency.errors}.`,
    "",
    `The worker's runs, as their notifications' \`sent_at\` group them (seconds from the first check-in: notifications sent): ` +
      `${latency.workerRuns.map((run) => `${fixed(run.firstSentS, 1)}–${fixed(run.lastSentS, 1)}: ${fixed(run.notifications)}`).join("; ")}.`,
  ];
}
