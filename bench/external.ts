// Item 6: what the external API's rate limiter costs a read. GET
// /v1/external/reservations/{id} with one API key of the read tenant through the gateway
// (wrk), and the same read's SQL with pgbench, without and with the limiter's statement,
// each statement as the API builds it (externalReadScript). The SQL runs with,
// without, without and with the limiter at each concurrency, as the check-ins run with and
// without their trigger, so that a machine growing busier or quieter weighs on both sides
// alike; the cost is 1 - with / without.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { sha256Hex } from "../src/api-keys/secret.ts";
import { admissionQuery, scopeQuery } from "../src/external/integration-scope.ts";
import { findReservation } from "../src/reservations/queries.ts";
import type { DbAddress } from "./database.ts";
import { LUA_IDS, RESERVATIONS_PER_TENANT, reservationId, tenantDigits, tenantId } from "./fixtures.ts";
import { runSqlLoad, type SqlLoadResult } from "./pgbench.ts";
import { describe, RANDOM_RESERVATION_ID, V1_PATH } from "./reads.ts";
import { scriptStatement, type SqlScript, sqlScript, statementOf, withScriptFiles } from "./statements.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

export const LIMITER_CONCURRENCIES = [8, 32] as const;
const WARM_UP_SECONDS = 2;

// The bench key, kept with the read tenant between runs. Its limit is far above what a run
// sends (a few thousand requests a second for a few seconds), so every request is counted
// and admitted.
const KEY = {
  id: "b6e00000-0000-4000-8000-000000000001",
  keyId: "benchkeybenchkey",
  secret: "benchsecret".padEnd(43, "0"),
  rateLimit: 1_000_000,
  windowSeconds: 60,
};
const TOKEN = `live_${KEY.keyId}_${KEY.secret}`;
// The address the gateway reports for wrk's connections, which the API passes on.
const GATEWAY_CLIENT = "127.0.0.1";

export type LimiterContext = {
  origin: string;
  db: DbAddress;
  sql: postgres.Sql;
  seconds: number;
  log: (line: string) => void;
};

export type LimiterResults = {
  // The API, every request counted, per concurrency.
  api: LoadResult[];
  // The SQL per concurrency, each side's two runs taken together.
  sqlWithout: SqlLoadResult[];
  sqlWith: SqlLoadResult[];
};

async function ensureBenchKey(sql: postgres.Sql, tenant: number): Promise<void> {
  const property = `b2e00000-0000-4000-8000-${tenantDigits(tenant)}`;
  await sql.begin(async (tx) => {
    const [made] = await tx`
      insert into public.api_keys (tenant_id, id, name, key_id, secret_hash, last_four, rate_limit, rate_limit_window_seconds)
      values (${tenantId(tenant)}, ${KEY.id}, 'pms-bench integration',
              ${KEY.keyId}, decode(${sha256Hex(KEY.secret)}, 'hex'), ${KEY.secret.slice(-4)}, ${KEY.rateLimit}, ${KEY.windowSeconds})
      on conflict (tenant_id, id) do update
        set rate_limit = excluded.rate_limit, rate_limit_window_seconds = excluded.rate_limit_window_seconds
      returning (xmax = 0) as created`;
    // A key's properties are written with it, never after.
    if (made?.created) {
      await tx`insert into public.api_key_properties (tenant_id, api_key_id, property_id)
               values (${tenantId(tenant)}, ${KEY.id}, ${property})`;
    }
  });
  // A fresh window for the run.
  await sql`delete from public.api_key_request_windows where api_key_id = ${KEY.id}`;
}

// Two runs as one: their transactions over their time.
function combine(runs: SqlLoadResult[]): SqlLoadResult {
  const transactions = runs.reduce((sum, run) => sum + run.transactions, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  return {
    clients: runs[0]!.clients,
    seconds,
    transactions,
    transactionsPerSecond: runs.reduce((sum, run) => sum + run.transactionsPerSecond * run.seconds, 0) / seconds,
    meanMs: transactions === 0 ? 0 : runs.reduce((sum, run) => sum + run.meanMs * run.transactions, 0) / transactions,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

// GET /v1/external/reservations/{id} as the database sees it (pgbench -M prepared), for the
// bench key and one of the tenant's reservations at random: with the limiter, the request
// counted first in a statement of its own outside the transaction
// (src/external/integration-scope.ts: the API writes it to the connection together with
// BEGIN and the scope's statement, where pgbench waits for its answer first); then BEGIN,
// the integration scope's one statement (the key checked, the tenant, property, role and
// statement timeout set from its row), findReservation, COMMIT. The bench key's limit is
// far above what a run sends, so every request is counted and admitted: the cost measured
// is the counter's upsert on the key's one row, which every client of the run updates.
async function externalReadScript(tenant: number, limited: boolean): Promise<SqlScript> {
  const secretHash = sha256Hex(KEY.secret);
  const admission = scriptStatement(admissionQuery(KEY.keyId, secretHash, GATEWAY_CLIENT), "a");
  const scope = scriptStatement(scopeQuery(KEY.keyId, secretHash), "s");
  const found = await statementOf("the external read by id", (db) => findReservation(db, reservationId(tenant, 1)));
  const read = scriptStatement(found, "p", { 1: RANDOM_RESERVATION_ID.expression });
  const script = sqlScript(RANDOM_RESERVATION_ID.setup, [...(limited ? [admission] : []), "BEGIN", scope, read, "COMMIT"]);
  return { ...script, variables: { ...script.variables, tenant_digits: tenantDigits(tenant) } };
}

export async function limiterCost(context: LimiterContext, tenant: number): Promise<LimiterResults> {
  await ensureBenchKey(context.sql, tenant);
  const headers = { "x-api-key": TOKEN };
  const check = await fetch(`${context.origin}${V1_PATH}/external/reservations/${reservationId(tenant, 500)}`, { headers });
  const checkText = await check.text();
  assert.equal(check.status, 200, `the external read answered ${check.status}: ${checkText}`);
  assert.match(check.headers.get("ratelimit") ?? "", /^"api-key";r=\d+;t=\d+$/, "the request was counted");

  const api = {
    origin: context.origin,
    headers,
    requestScript: `${LUA_IDS}
request = function()
  return wrk.format("GET", "${V1_PATH}/external/reservations/" .. reservation_id(${tenant}, math.random(1, ${RESERVATIONS_PER_TENANT})))
end`,
  };
  const scripts = { with: await externalReadScript(tenant, true), without: await externalReadScript(tenant, false) };
  return await withScriptFiles(scripts, async (files) => {
    const sqlPoint = (limited: boolean, clients: number, seconds = context.seconds) => {
      const side = limited ? "with" : "without";
      return runSqlLoad({ db: context.db, scriptFile: files[side], variables: scripts[side].variables, clients, seconds });
    };
    await runLoad({ ...api, connections: 8, seconds: WARM_UP_SECONDS });
    await sqlPoint(true, 8, WARM_UP_SECONDS);
    await sqlPoint(false, 8, WARM_UP_SECONDS);
    const results: LimiterResults = { api: [], sqlWithout: [], sqlWith: [] };
    for (const connections of LIMITER_CONCURRENCIES) {
      const apiResult = await runLoad({ ...api, connections, seconds: context.seconds, observe: context.sql });
      context.log(`  GET /v1/external/reservations/{id} c=${connections}: ${describe(apiResult)}`);
      const runs: { limited: boolean; result: SqlLoadResult }[] = [];
      for (const limited of [true, false, false, true]) {
        const result = await sqlPoint(limited, connections);
        context.log(`  SQL ${limited ? "with" : "without"} the limiter c=${connections}: ${result.transactionsPerSecond.toFixed(0)} tx/s, ` +
          `mean ${result.meanMs.toFixed(2)} ms, errors ${result.errors}`);
        runs.push({ limited, result });
      }
      results.api.push(apiResult);
      results.sqlWith.push(combine(runs.filter((run) => run.limited).map((run) => run.result)));
      results.sqlWithout.push(combine(runs.filter((run) => !run.limited).map((run) => run.result)));
    }
    // Every request was admitted: the key never reached its limit.
    const [window] = await context.sql<{ requests: number }[]>`
      select requests from public.api_key_request_windows where api_key_id = ${KEY.id}`;
    assert.ok((window?.requests ?? 0) < KEY.rateLimit, "the bench key stayed within its limit");
    return results;
  });
}
