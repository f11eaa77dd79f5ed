// npm run bench (scripts/bench.sh brings the stack up, pauses the workers' schedule and
// runs this): the eleven parts of the benchmark against the local stack, in an order that
// lets the scale comparison see the database with one bench tenant and then with 1,000,
// and keeps the large tenant out of every part before its own. Writes
// bench/results/latest.{json,md}, adds the run's row to bench/results/history.md, puts the
// tables into docs/benchmarks.md as its latest results, prints them, and exits 1 when
// anything errored.
//   --seconds N        how long each load point runs (default 10)
//   --only a,b,...     run only these parts (report.ts's PARTS); such a run is a look, not
//                      a result: it writes to .stack/bench/results/ and leaves
//                      bench/results/ and docs/benchmarks.md as they are
//   --before REV       part 6 also runs revision REV's api, pooled, beside this tree's
//                      (bench/direct-and-pooled.ts), and part 4 its notifications worker
//                      (bench/pipeline.ts), from a work tree of it in .stack/bench
import { defaultWorkerSettings } from "../src/notifications/worker.ts";
import { ensureAuthUser, signIn, tokenClaims } from "../test/support/session.ts";
import { stack } from "../test/support/stack.ts";
import { adminSql, dbAddress, runSqlFile } from "./database.ts";
import { directAndPooled } from "./direct-and-pooled.ts";
import type { Before } from "./instances.ts";
import { limiterCost } from "./external.ts";
import { benchOwner, benchStaff, LARGE_TENANT, READ_TENANT, RESERVATIONS_PER_TENANT, TENANT_ID_PREFIX, TENANTS } from "./fixtures.ts";
import { largeTenant } from "./large-tenant.ts";
import { notificationLatency } from "./notification-latency.ts";
import { pipeline, pipelineBeside } from "./pipeline.ts";
import {
  buildReport,
  historyRow,
  type Measurements,
  markdown,
  type Part,
  PARTS,
  type RunInfo,
  type ScaleReads,
  withHistoryRow,
  withLatestResults,
} from "./report.ts";
import { apiReads, checkReadRoutes, readsWithCeilings } from "./reads.ts";
import { selling, timePlans } from "./selling.ts";
import { webhooks } from "./webhooks.ts";
import { ensureTriggerEnabled, writes } from "./writes.ts";

const SEED = new URL("./sql/seed.sql", import.meta.url);
const SEED_LARGE_TENANT = new URL("./sql/seed-large-tenant.sql", import.meta.url);
const DROP = new URL("./sql/drop-tenants.sql", import.meta.url);
const RESULTS = new URL("./results/", import.meta.url);
// Where a run of some parts writes: the stack's git-ignored state, never bench/results.
const PARTIAL_RESULTS = new URL("../.stack/bench/results/", import.meta.url);
const ROOT = new URL("../", import.meta.url);
const STACK_SCRIPT = new URL("../scripts/stack.sh", import.meta.url);
const BENCHMARKS_PAGE = new URL("../docs/benchmarks.md", import.meta.url);
// The pipeline's tenants, and the check-ins' (every bench tenant but the read tenant's).
// 20 check-ins a tenant, five notifications each: 10,000 notifications.
// With --before, this tree's worker and the earlier revision's each drain them once to warm
// up and then besideRounds times, in turns.
const PIPELINE = { first: 2, count: 100, checkInsPerTenant: 20, besideRounds: 5 };
const WRITE_TENANTS = { first: 2, last: TENANTS };
// What the pgmq ceiling sends, reads and deletes at a time: the worker's claim.
const CEILING_BATCH = defaultWorkerSettings.claimSize;
// The notification latency part: 3,000 check-ins at a steady rate, across every bench
// tenant but the read tenant.
const LATENCY = { checkInsPerSecond: 100, seconds: 30 };

function secondsPerPoint(args: string[]): number {
  const at = args.indexOf("--seconds");
  const value = at === -1 ? 10 : Number(args[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error("--seconds takes a whole number of seconds");
  return value;
}

// --only a,b: the parts named, in the order they run; every part without it.
function chosenParts(args: string[]): Part[] {
  const at = args.indexOf("--only");
  if (at === -1) return [...PARTS];
  const named = (args[at + 1] ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  const unknown = named.filter((name) => !(PARTS as readonly string[]).includes(name));
  if (named.length === 0 || unknown.length > 0) {
    throw new Error(`--only takes parts separated by commas, of: ${PARTS.join(", ")}${unknown.length ? ` (not ${unknown.join(", ")})` : ""}`);
  }
  return PARTS.filter((part) => named.includes(part));
}

// --before REV: the revision, checked out in a work tree of its own (git-ignored), or none.
async function beforeRevision(args: string[]): Promise<Before | undefined> {
  const at = args.indexOf("--before");
  if (at === -1) return undefined;
  const revision = await git("rev-parse", "--short=12", `${args[at + 1] ?? ""}^{commit}`);
  if (!/^[0-9a-f]{12}$/.test(revision)) throw new Error(`--before takes a revision of this repository, not ${args[at + 1]}`);
  const root = new URL(`.stack/bench/before-${revision}/`, ROOT);
  try {
    await Deno.stat(root);
  } catch {
    const added = await new Deno.Command("git", {
      args: ["worktree", "add", "--detach", root.pathname, revision], cwd: ROOT.pathname, stdout: "null", stderr: "piped",
    }).output();
    if (added.code !== 0) throw new Error(`git worktree add ${revision}: ${new TextDecoder().decode(added.stderr)}`);
  }
  return { revision, root };
}

async function git(...args: string[]): Promise<string> {
  const output = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
  return new TextDecoder().decode(output.stdout).trim();
}

// The workers' schedule as scripts/stack.sh runs it: on for the latency part alone (the
// bench pauses it otherwise), off again after, whatever happened.
async function setSchedule(on: boolean): Promise<void> {
  const output = await new Deno.Command("bash", {
    args: [STACK_SCRIPT.pathname, "scheduler", on ? "on" : "off"], cwd: ROOT.pathname, stdin: "null", stdout: "null", stderr: "piped",
  }).output();
  if (output.code !== 0) throw new Error(`stack.sh scheduler ${on ? "on" : "off"} failed: ${new TextDecoder().decode(output.stderr)}`);
}

// The schedule's period as configured, for the report.
async function workerEverySeconds(): Promise<number> {
  const setting = /^WORKER_EVERY_SECONDS=(\d+)$/m.exec(await Deno.readTextFile(STACK_SCRIPT));
  if (!setting) throw new Error("scripts/stack.sh sets no WORKER_EVERY_SECONDS");
  return Number(setting[1]);
}

const log = (line: string) => console.log(line);
const seconds = secondsPerPoint(Deno.args);
const parts = chosenParts(Deno.args);
const before = await beforeRevision(Deno.args);
const runs = (part: Part) => parts.includes(part);
const partial = parts.length < PARTS.length;
const sql = adminSql(stack.dbUrl);
const db = dbAddress(stack.dbUrl);
const started = performance.now();

const info: RunInfo = {
  date: new Date().toISOString(),
  commit: await git("rev-parse", "--short=12", "HEAD"),
  // The screenshots the tests write (docs/images) are their output, not the code measured.
  dirty: (await git("status", "--porcelain", "--", ".", ":!bench/results", ":!docs/images")) !== "",
  cores: navigator.hardwareConcurrency,
  loadAverageAtStart: Deno.loadavg(),
  parts,
  secondsPerPoint: seconds,
  tenants: TENANTS,
  reservationsPerTenant: RESERVATIONS_PER_TENANT,
};

// Fresh statistics, and the bulk writes flushed now rather than by a checkpoint in the
// middle of the next measurement.
async function vacuumAnalyze() {
  await sql`vacuum analyze public.reservations, public.guests, public.units, public.room_types, public.rate_plans,
    public.rate_plan_days, public.notifications, public.tenant_memberships`;
  await sql`checkpoint`;
}

// The tables the large tenant's load writes, left to autovacuum or not.
async function autovacuumOfLoadedTables(enabled: boolean) {
  for (const table of ["reservations", "guests", "units", "room_types", "rate_plans", "rate_plan_days"]) {
    if (enabled) await sql.unsafe(`alter table public.${table} reset (autovacuum_enabled)`);
    else await sql.unsafe(`alter table public.${table} set (autovacuum_enabled = off)`);
  }
}

// Tenants 2..1000 and the large tenant exist only while a run needs them: the scale
// comparison reads from a database that holds one bench tenant, and npm test's cluster
// keeps no million rows. Dropped, they leave the tables' indexes hundreds of times the
// size of what is left in them, and the planner prices an index by its size: with 1,006
// reservations left in an index of a million's pages, it reads a reservation by key by
// reading the whole table. Rebuilt, the indexes are as a fresh cluster's, so a
// one-tenant run after a drop plans as a run on a fresh clone does.
async function dropBulkTenants() {
  await runSqlFile(db, DROP, { first: 2, last: TENANTS });
  await runSqlFile(db, DROP, { first: LARGE_TENANT.number, last: LARGE_TENANT.number });
  await vacuumAnalyze();
  await sql`reindex schema public`;
}

async function seedBulkTenants() {
  log(`== seeding tenants 2-${TENANTS} (${RESERVATIONS_PER_TENANT} reservations each)`);
  const started = performance.now();
  await runSqlFile(db, SEED, { first: 2, last: TENANTS });
  await vacuumAnalyze();
  log(`  seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

let exitCode = 1;
try {
  await ensureTriggerEnabled(sql);
  if (partial) log(`== only: ${parts.join(", ")}`);
  log("== preparing: the bench owner, the pipeline's staff and tenant 1 (kept between runs); tenants 2-1001 dropped if a run left them");
  for (const user of [benchOwner, ...benchStaff]) await ensureAuthUser({ id: user.userId, email: user.email, password: user.password });
  await dropBulkTenants();
  await runSqlFile(db, SEED, { first: 1, last: 1 });
  await vacuumAnalyze();

  // A run takes minutes; the access token lasts an hour (supabase/config.toml's jwt_expiry).
  const { token } = await signIn(benchOwner.email, benchOwner.password);
  const claims = tokenClaims(token);
  const readContext = { origin: stack.apiUrl, token, claims, db, sql, seconds, log };
  await checkReadRoutes(readContext, READ_TENANT);

  const measurements: Measurements = {};
  let oneTenantBefore: ScaleReads["oneTenantBefore"] | undefined;
  if (runs("scale")) {
    log("== 5. scale, first of three: the API's reads while the database holds one bench tenant");
    oneTenantBefore = await apiReads(readContext, READ_TENANT);
  }

  await seedBulkTenants();
  const bodyBytes = await checkReadRoutes(readContext, READ_TENANT);

  if (oneTenantBefore) {
    log(`== 5. scale, second of three: the same reads with ${TENANTS} tenants`);
    const thousandTenants = await apiReads(readContext, READ_TENANT);
    log(`== 5. scale, third of three: the same reads with one bench tenant again (tenants 2-${TENANTS} dropped)`);
    await dropBulkTenants();
    const oneTenantAfter = await apiReads(readContext, READ_TENANT);
    measurements.scale = { oneTenantBefore, thousandTenants, oneTenantAfter };
    // Every other part reads or writes among the 1,000 tenants.
    if (parts.some((part) => part !== "scale")) {
      await seedBulkTenants();
      await checkReadRoutes(readContext, READ_TENANT);
    }
  }

  if (runs("reads")) {
    log("== 1 and 2. API reads for one tenant among 1,000, each point beside its ceilings: the same SQL with pgbench, a bare function through the gateway");
    const { api, sql: sqlCeilings, http: httpCeilings } = await readsWithCeilings(readContext, bodyBytes, READ_TENANT);
    measurements.reads = {
      list: { api: api.list, sqlCeiling: sqlCeilings.list, httpCeiling: httpCeilings.list, bodyBytes: bodyBytes.list },
      get: { api: api.get, sqlCeiling: sqlCeilings.get, httpCeiling: httpCeilings.get, bodyBytes: bodyBytes.get },
    };
  }

  if (runs("direct-and-pooled")) {
    log("== 6. both ways in: the same reads from an api instance connected directly and one through the pooler, side by side");
    if (before) log(`   and revision ${before.revision}'s api, pooled, beside this tree's`);
    measurements.directAndPooled = await directAndPooled(readContext, READ_TENANT, before);
  }

  if (runs("limiter")) {
    log("== 7. the external API's rate limiter: an external read through the gateway, and its SQL without and with the limiter");
    measurements.limiter = await limiterCost({ origin: stack.apiUrl, db, sql, seconds, log }, READ_TENANT);
  }

  if (runs("writes")) {
    log("== 3. writes");
    measurements.writes = await writes({ origin: stack.apiUrl, token, sql, seconds, tenants: WRITE_TENANTS, log });
    // The check-ins' events would be drained with the pipeline's; their tenants go at the end.
    await sql`delete from pgmq.q_notification_events where message ->> 'tenantId' like ${`${TENANT_ID_PREFIX}%`}`;
    await sql`delete from pgmq.q_notifications where message ->> 'tenantId' like ${`${TENANT_ID_PREFIX}%`}`;
  }

  if (runs("pipeline")) {
    log("== 4. notification pipeline");
    const pipelineContext = {
      origin: stack.apiUrl,
      mailUrl: stack.mailUrl,
      smsUrl: stack.smsUrl,
      serviceRoleKey: stack.serviceRoleKey,
      runtimePort: stack.functionPorts["notifications-worker"]!,
      sql,
      tenants: { first: PIPELINE.first, count: PIPELINE.count },
      checkInsPerTenant: PIPELINE.checkInsPerTenant,
      ceilingBatch: CEILING_BATCH,
      log,
    };
    measurements.pipeline = await pipeline(pipelineContext);
    if (before) {
      log(`   the same drained by this tree's worker and revision ${before.revision}'s, side by side`);
      measurements.pipelineBeside = await pipelineBeside(pipelineContext, before, PIPELINE.besideRounds);
    }
  }

  if (runs("webhooks")) {
    log("== 8. outbound webhooks: one check-in event per stay to each of the pipeline's tenants' subscriptions");
    measurements.webhooks = await webhooks({
      origin: stack.apiUrl,
      receiverUrl: stack.webhookReceiverUrl,
      serviceRoleKey: stack.serviceRoleKey,
      runtimePort: stack.functionPorts["webhooks-worker"]!,
      sql,
      tenants: { first: PIPELINE.first, count: PIPELINE.count },
      eventsPerTenant: 100,
      log,
    });
  }

  if (runs("large-tenant") || runs("selling")) {
    // A hotel importing its history reads it before any ANALYZE has seen it: autovacuum
    // would analyze the loaded tables within its next minute, in the middle of the
    // measurement, so it leaves them alone until the plans without statistics are timed.
    if (runs("selling")) await autovacuumOfLoadedTables(false);
    let stale: Awaited<ReturnType<typeof timePlans>> | undefined;
    try {
      // Seeded only now: its 100,000 rows would change the statistics every part before it plans with.
      log(`== seeding the large tenant (${LARGE_TENANT.number}: ${LARGE_TENANT.reservations.toLocaleString("en-US")} reservations)`);
      const largeStarted = performance.now();
      await runSqlFile(db, SEED_LARGE_TENANT, {
        n: LARGE_TENANT.number, properties: LARGE_TENANT.properties, units: LARGE_TENANT.units, guests: LARGE_TENANT.guests,
        stays_per_unit: LARGE_TENANT.staysPerUnit,
      });
      log(`  seeded in ${((performance.now() - largeStarted) / 1000).toFixed(1)} s`);
      if (runs("selling")) {
        // VACUUM alone first (it gathers no statistics), so that the visibility map is the
        // same on both sides and only the statistics differ.
        await sql`vacuum public.reservations, public.guests, public.units, public.room_types, public.rate_plans,
          public.rate_plan_days`;
        stale = await timePlans(readContext);
      }
    } finally {
      if (runs("selling")) await autovacuumOfLoadedTables(true);
    }
    await vacuumAnalyze();
    if (runs("large-tenant")) {
      log("== 9. a large tenant: filtered lists beside the read tenant's, and what their total costs");
      measurements.largeTenant = await largeTenant(readContext);
    }
    if (stale) {
      log("== 11. selling by date on the large tenant: plans before and after ANALYZE, availability, the bulk calendar, the race");
      const fresh = await timePlans(readContext);
      log(`  the March list ${stale.list.medianMs.toFixed(2)} ms before ANALYZE, ${fresh.list.medianMs.toFixed(2)} ms after; ` +
        `availability ${stale.availability.medianMs.toFixed(2)} ms before, ${fresh.availability.medianMs.toFixed(2)} ms after`);
      measurements.selling = await selling(readContext, { stale, fresh });
    }
  }

  if (runs("latency")) {
    log("== 10. notification latency: check-ins at a steady rate, the workers on their deployed schedule");
    measurements.notificationLatency = await notificationLatency({
      origin: stack.apiUrl,
      token,
      mailUrl: stack.mailUrl,
      smsUrl: stack.smsUrl,
      serviceRoleKey: stack.serviceRoleKey,
      sql,
      tenants: WRITE_TENANTS,
      checkInsPerSecond: LATENCY.checkInsPerSecond,
      seconds: LATENCY.seconds,
      schedule: setSchedule,
      workerEverySeconds: await workerEverySeconds(),
      log,
    });
  }

  log("== cleaning up: tenants 2-1001");
  await dropBulkTenants();

  const report = buildReport(info, measurements, (performance.now() - started) / 1000);

  const table = markdown(report);
  const name = `${info.date.slice(0, 10)}-${info.commit}`;
  if (partial) {
    const partialName = `${info.date.replace(/[:.]/g, "-")}-${info.commit}-${parts.join("+")}`;
    await Deno.mkdir(PARTIAL_RESULTS, { recursive: true });
    await Deno.writeTextFile(new URL(`${partialName}.json`, PARTIAL_RESULTS), `${JSON.stringify(report, null, 2)}\n`);
    await Deno.writeTextFile(new URL(`${partialName}.md`, PARTIAL_RESULTS), table);
    log(`\n${table}`);
    log(`written: .stack/bench/results/${partialName}.json and .md (a run of some parts leaves bench/results and docs/benchmarks.md alone)`);
  } else {
    await Deno.mkdir(RESULTS, { recursive: true });
    await Deno.writeTextFile(new URL("latest.json", RESULTS), `${JSON.stringify(report, null, 2)}\n`);
    await Deno.writeTextFile(new URL("latest.md", RESULTS), table);
    const history = new URL("history.md", RESULTS);
    const before = await Deno.readTextFile(history).catch(() => "");
    await Deno.writeTextFile(history, withHistoryRow(before, name, historyRow(report, name)));
    await Deno.writeTextFile(BENCHMARKS_PAGE, withLatestResults(await Deno.readTextFile(BENCHMARKS_PAGE), name, table));
    log(`\n${table}`);
    log("written: bench/results/latest.json, bench/results/latest.md, a row of bench/results/history.md, docs/benchmarks.md");
  }
  exitCode = report.errors === 0 ? 0 : 1;
  if (report.errors > 0) log(`${report.errors} requests or notifications errored`);
} catch (error) {
  console.error(`the benchmark failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  await runSqlFile(db, DROP, { first: 2, last: TENANTS }).catch((cleanup) => console.error(`and could not clean up: ${cleanup}`));
  await runSqlFile(db, DROP, { first: LARGE_TENANT.number, last: LARGE_TENANT.number })
    .catch((cleanup) => console.error(`and could not drop the large tenant: ${cleanup}`));
} finally {
  await ensureTriggerEnabled(sql).catch(() => {});
  await sql.end();
}
Deno.exit(exitCode);
