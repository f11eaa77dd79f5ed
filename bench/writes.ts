// Item 3: PATCH /v1/guests/{id} and POST /v1/reservations/{id}/check-in at 32
// connections, and check-in again with the notification trigger disabled: the
// trigger's cost is what it takes off check-in throughput. Check-ins run four times,
// with, without, without and with the trigger, so that a machine growing busier or
// quieter during the runs (a checkpoint, autovacuum, a neighbour) weighs on both sides
// alike rather than on whichever ran second.
import type postgres from "postgres";
import { CONFIRMED_PER_TENANT, FIRST_CONFIRMED, GUESTS_PER_TENANT, LATENCY_CONFIRMED_PER_TENANT, LUA_IDS } from "./fixtures.ts";
import { describe, V1_PATH } from "./reads.ts";
import { combineRuns, type LoadResult, runLoad } from "./wrk.ts";

export const WRITE_CONNECTIONS = 32;
const TRIGGER = "notify_reservation_status";

export type WriteContext = {
  origin: string;
  token: string;
  sql: postgres.Sql;
  seconds: number;
  // The bench tenants writes go to (never the read tenant, whose rows stay as seeded).
  tenants: { first: number; last: number };
  log: (line: string) => void;
};

export type WriteResults = {
  patchGuest: LoadResult;
  // Each side's two runs taken together.
  checkIn: LoadResult;
  checkInWithoutTrigger: LoadResult;
  // The four runs in the order they ran.
  checkInRuns: { trigger: boolean; result: LoadResult }[];
};

// A guest of a random bench tenant gets new notes.
function patchGuestScript(tenants: WriteContext["tenants"]): string {
  return `${LUA_IDS}
local written = 0
request = function()
  written = written + 1
  local n = math.random(${tenants.first}, ${tenants.last})
  local headers = with_tenant(n)
  headers["content-type"] = "application/json"
  return wrk.format("PATCH", "${V1_PATH}/guests/" .. guest_id(n, math.random(1, ${GUESTS_PER_TENANT})), headers,
    '{"notes":"bench note ' .. written .. '"}')
end`;
}

// Each request checks in a confirmed reservation no request has taken before: the
// i-th goes to tenant first + i mod count, reservation FIRST_CONFIRMED + i div count.
function checkInScript(tenants: WriteContext["tenants"], start: number): string {
  const count = tenants.last - tenants.first + 1;
  return `${LUA_IDS}
local taken = ${start}
request = function()
  local i = taken
  taken = taken + 1
  local n = ${tenants.first} + i % ${count}
  local r = ${FIRST_CONFIRMED} + math.floor(i / ${count})
  return wrk.format("POST", "${V1_PATH}/reservations/" .. reservation_id(n, r) .. "/check-in", with_tenant(n))
end`;
}

export async function writes(context: WriteContext): Promise<WriteResults> {
  const base = { origin: context.origin, headers: { authorization: `Bearer ${context.token}` }, observe: context.sql };
  const connections = WRITE_CONNECTIONS;
  // Short of the last confirmed stays of each tenant, which the notification latency part checks in.
  const available = (context.tenants.last - context.tenants.first + 1) * (CONFIRMED_PER_TENANT - LATENCY_CONFIRMED_PER_TENANT);

  const patchGuest = await runLoad({ ...base, connections, seconds: context.seconds, requestScript: patchGuestScript(context.tenants) });
  context.log(`  PATCH /v1/guests/{id} c=${connections}: ${describe(patchGuest)}`);

  const checkInRuns: WriteResults["checkInRuns"] = [];
  let start = 0;
  for (const trigger of [true, false, false, true]) {
    if (!trigger) await context.sql`alter table public.reservations disable trigger ${context.sql(TRIGGER)}`;
    try {
      const result = await runLoad({ ...base, connections, seconds: context.seconds, requestScript: checkInScript(context.tenants, start) });
      checkInRuns.push({ trigger, result });
      context.log(`  check-in ${trigger ? "with" : "without"} the trigger c=${connections}: ${describe(result)}`);
      // Past every request of this run, including any still in flight when wrk stopped.
      start += result.requests + 2 * connections;
    } finally {
      await context.sql`alter table public.reservations enable trigger ${context.sql(TRIGGER)}`;
    }
  }
  if (start > available) throw new Error(`check-ins ran past the ${available} confirmed reservations: seed more tenants`);
  const side = (trigger: boolean) => combineRuns(checkInRuns.filter((run) => run.trigger === trigger).map((run) => run.result));
  const checkIn = side(true);
  const checkInWithoutTrigger = side(false);
  return { patchGuest, checkIn, checkInWithoutTrigger, checkInRuns };
}

// A run stopped between disabling and enabling the trigger must not leave it off.
export async function ensureTriggerEnabled(sql: postgres.Sql): Promise<void> {
  await sql`alter table public.reservations enable trigger ${sql(TRIGGER)}`;
}
