// Item 3: PATCH /v1/guests/{id} and POST /v1/reservations/{id}/check-in at 32
// connections, and check-in again with the notification trigger disabled: the
// trigger's cost is what it takes off check-in throughput.
import type postgres from "postgres";
import { CONFIRMED_PER_TENANT, FIRST_CONFIRMED, GUESTS_PER_TENANT, LUA_IDS } from "./fixtures.ts";
import { describe, V1_PATH } from "./reads.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

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

export type WriteResults = { patchGuest: LoadResult; checkIn: LoadResult; checkInWithoutTrigger: LoadResult };

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
  const base = { origin: context.origin, headers: { authorization: `Bearer ${context.token}` } };
  const connections = WRITE_CONNECTIONS;
  const available = (context.tenants.last - context.tenants.first + 1) * CONFIRMED_PER_TENANT;

  const patchGuest = await runLoad({ ...base, connections, seconds: context.seconds, requestScript: patchGuestScript(context.tenants) });
  context.log(`  PATCH /v1/guests/{id} c=${connections}: ${describe(patchGuest)}`);

  const checkIn = await runLoad({ ...base, connections, seconds: context.seconds, requestScript: checkInScript(context.tenants, 0) });
  context.log(`  check-in c=${connections}: ${describe(checkIn)}`);

  // Past every request of the first run, including any still in flight when wrk stopped.
  const start = checkIn.requests + 2 * connections;
  let checkInWithoutTrigger: LoadResult;
  await context.sql`alter table public.reservations disable trigger ${context.sql(TRIGGER)}`;
  try {
    checkInWithoutTrigger = await runLoad({
      ...base, connections, seconds: context.seconds, requestScript: checkInScript(context.tenants, start),
    });
  } finally {
    await context.sql`alter table public.reservations enable trigger ${context.sql(TRIGGER)}`;
  }
  context.log(`  check-in without the trigger c=${connections}: ${describe(checkInWithoutTrigger)}`);
  const used = start + checkInWithoutTrigger.requests;
  if (used > available) throw new Error(`check-ins ran past the ${available} confirmed reservations: seed more tenants`);
  return { patchGuest, checkIn, checkInWithoutTrigger };
}

// A run stopped between disabling and enabling the trigger must not leave it off.
export async function ensureTriggerEnabled(sql: postgres.Sql): Promise<void> {
  await sql`alter table public.reservations enable trigger ${sql(TRIGGER)}`;
}
