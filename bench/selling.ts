// Part 11: selling by date, on the large tenant (bench/sql/seed-large-tenant.sql), whose
// first property has 100 units of 10 room types, 5 rate plans with their own days, and
// four years of stays.
// - Plans that hold without fresh statistics: right after the bulk load, before ANALYZE,
//   and again after it, the large tenant's March list (the route's own statement, under
//   the request's context) and the property's availability, each timed with EXPLAIN
//   ANALYZE, the plan of the list outlined and compared node by node; stale over fresh
//   says what the statistics cost.
// - Availability for 14 nights beside a read by id of the same tenant, with wrk: availability,
//   by id, by id, availability, each side's two runs taken together.
// - A bulk calendar update (365 days of 10 plans, one request) beside one reservation
//   written (a stay booked by room type and priced), one after the other, in turns.
// - The booking race under load: 50 bookings at once of a room type's last room while
//   availability is loaded: exactly one is stored.
// - What a channel manager asks, with an API key of the tenant: a year of the first
//   property's availability, rates and restrictions (10 room types, 5 plans, 365 days)
//   beside an external read by id, with wrk as availability is; and a stay a channel books
//   beside one the front desk books, one after the other, in turns.
import assert from "node:assert/strict";
import type postgres from "postgres";
import { listReservations } from "../src/reservations/queries.ts";
import { listReservationsQuery } from "../src/reservations/schema.ts";
import { contextStatement } from "../src/tenancy/request-scope.ts";
import { sha256Hex } from "../src/api-keys/secret.ts";
import { LARGE_TENANT, tenantDigits, tenantId } from "./fixtures.ts";
import { explain, inRequestContext, median, type PlanNode, planOutline } from "./large-tenant.ts";
import { describe, headersFor, type ReadContext, V1_PATH, WARM_UP_SECONDS } from "./reads.ts";
import { statementOf } from "./statements.ts";
import { combineRuns, type LoadResult, runLoad } from "./wrk.ts";

export const SELLING_CONNECTIONS = 8;
const RACE_BOOKINGS = 50;
const TIMED_RUNS = 5;
const WRITE_ROUNDS = 7;

const digits = tenantDigits(LARGE_TENANT.number);
const property = (p: number) => `b2e${String(p).padStart(5, "0")}-0000-4000-8000-${digits}`;
const roomType = (p: number, k: number) => `b8e${String((p - 1) * 10 + k).padStart(5, "0")}-0000-4000-8000-${digits}`;
const ratePlan = (p: number, j: number) => `b9e${String((p - 1) * 5 + j).padStart(5, "0")}-0000-4000-8000-${digits}`;
const guest = (g: number) => `b4e${String(g).padStart(5, "0")}-0000-4000-8000-${digits}`;

// The question a front desk asks: two adults, two weeks in July, at the first property.
const AVAILABILITY = { propertyId: property(1), arrival: "2026-07-06", departure: "2026-07-20", adults: "2" };
const availabilityPath = `/availability?${new URLSearchParams(AVAILABILITY)}`;
// The March list the large-tenant part loads.
const MARCH = { from: "2026-03-01", to: "2026-04-01" };

// The channel manager's key: every property of the large tenant, every scope, a limit no
// run reaches. Made with the tenant's seed each run, so it goes with the tenant.
const CHANNEL_KEY = {
  id: `b6e000c1-0000-4000-8000-${digits}`,
  keyId: "benchchannelkeys",
  secret: "benchchannel".padEnd(43, "0"),
};
const CHANNEL_TOKEN = `live_${CHANNEL_KEY.keyId}_${CHANNEL_KEY.secret}`;
// A year of the first property, as a channel manager reads it to mirror it.
const ARI_PATH = `/external/properties/${property(1)}/ari?from=2026-07-01&to=2027-06-30`;

export type Timed = { medianMs: number; runsMs: number[] };
export type StatisticsCase = { list: Timed & { outline: string; nodes: string }; availability: Timed };
export type PlansWithoutStatistics = { stale: StatisticsCase; fresh: StatisticsCase };

// A plan's shape: each node's type and index or relation, depth first, without numbers.
function planNodes(node: PlanNode): string {
  const on = node["Index Name"] ?? node["Relation Name"];
  const children = (node.Plans ?? []).map(planNodes);
  return `${node["Node Type"]}${on ? ` ${on}` : ""}${children.length ? `(${children.join(", ")})` : ""}`;
}

// Whether the list kept its plan: the same nodes on the same indexes before ANALYZE and after.
export const listKeptItsPlan = (statistics: PlansWithoutStatistics) => statistics.stale.list.nodes === statistics.fresh.list.nodes;

export type SellingResult = {
  property: string;
  statistics: PlansWithoutStatistics;
  connections: number;
  availability: LoadResult;
  readById: LoadResult;
  runs: { route: "availability" | "readById"; result: LoadResult }[];
  bulkCalendar: { days: number; plans: number; runsMs: number[]; medianMs: number };
  singleWrite: { runsMs: number[]; medianMs: number };
  race: { bookings: number; stored: number; refused: number; other: number; ms: number; underLoad: LoadResult };
  channels: {
    ari: LoadResult;
    externalReadById: LoadResult;
    runs: { route: "ari" | "externalReadById"; result: LoadResult }[];
    ariBytes: number;
    channelWrite: { runsMs: number[]; medianMs: number };
    frontDeskWrite: { runsMs: number[]; medianMs: number };
  };
};

async function ensureChannelKey(sql: postgres.Sql): Promise<void> {
  await sql`
    insert into public.api_keys (tenant_id, id, name, key_id, secret_hash, last_four, all_properties, scopes, rate_limit)
    values (${tenantId(LARGE_TENANT.number)}, ${CHANNEL_KEY.id}, 'pms-bench channel manager', ${CHANNEL_KEY.keyId},
            decode(${sha256Hex(CHANNEL_KEY.secret)}, 'hex'), ${CHANNEL_KEY.secret.slice(-4)}, true,
            '{reservations:read,reservations:write,ari:read}', 1000000)
    on conflict (tenant_id, id) do nothing`;
  await sql`delete from public.api_key_request_windows where api_key_id = ${CHANNEL_KEY.id}`;
}

// A year of availability, rates and restrictions beside an external read by id, then a
// channel's booking beside the front desk's (each a stay of three nights booked by room type
// and priced from the calendar, on nights no other round uses).
async function channels(context: ReadContext, headers: Record<string, string>): Promise<SellingResult["channels"]> {
  const v1 = `${context.origin}${V1_PATH}`;
  await ensureChannelKey(context.sql);
  const keyHeaders = { "x-api-key": CHANNEL_TOKEN };
  const checked = await fetch(`${v1}${ARI_PATH}`, { headers: keyHeaders });
  const text = await checked.text();
  assert.equal(checked.status, 200, `ARI answered ${checked.status}: ${text}`);
  const answer = JSON.parse(text) as { roomTypes: { available: unknown[] }[]; ratePlans: { price: unknown[] }[] };
  assert.equal(answer.roomTypes.length, 10, "the property sells ten room types");
  assert.equal(answer.ratePlans.length, 5, "with five plans");
  assert.ok([...answer.roomTypes.map((type) => type.available), ...answer.ratePlans.map((plan) => plan.price)]
    .every((values) => values.length === 365), "each with a value for each of 365 days");

  const ariScript = `request = function() return wrk.format("GET", "${V1_PATH}${ARI_PATH}") end`;
  const byIdScript = `request = function()
  return wrk.format("GET", string.format("${V1_PATH}/external/reservations/b7%06d-0000-4000-8000-${digits}", math.random(1, ${LARGE_TENANT.reservations})))
end`;
  const point = (requestScript: string, seconds: number) =>
    ({ origin: context.origin, requestScript, headers: keyHeaders, connections: SELLING_CONNECTIONS, seconds });
  for (const script of [ariScript, byIdScript]) await runLoad(point(script, WARM_UP_SECONDS));
  const runs: SellingResult["channels"]["runs"] = [];
  for (const route of ["ari", "externalReadById", "externalReadById", "ari"] as const) {
    const result = await runLoad({ ...point(route === "ari" ? ariScript : byIdScript, context.seconds), observe: context.sql });
    runs.push({ route, result });
    context.log(`  ${route === "ari" ? `GET /v1${ARI_PATH}` : "GET /v1/external/reservations/{id}"} c=${SELLING_CONNECTIONS}: ` +
      describe(result));
  }
  const taken = (route: "ari" | "externalReadById") => combineRuns(runs.filter((run) => run.route === route).map((run) => run.result));

  const channelRuns: number[] = [];
  const deskRuns: number[] = [];
  const run = Date.now().toString(36).toUpperCase();
  for (let round = 0; round <= WRITE_ROUNDS; round++) {
    const nights = (offset: number) => ({
      checkIn: new Date(Date.UTC(2031, 0, 1 + round * 14 + offset)).toISOString().slice(0, 10),
      checkOut: new Date(Date.UTC(2031, 0, 4 + round * 14 + offset)).toISOString().slice(0, 10),
    });
    const stay = { roomTypeId: roomType(5, 1), ratePlanId: ratePlan(5, 1), adults: 2, children: 0 };
    const channel = () =>
      timed(() =>
        fetch(`${v1}/external/properties/${property(5)}/reservations`, {
          method: "POST", headers: { ...keyHeaders, "content-type": "application/json" },
          body: JSON.stringify({
            ...stay, ...nights(0), channel: "Booking.com", externalReference: `BENCH-${run}-${round}`,
            guest: { firstName: "Bench", lastName: `Guest ${round}`, email: `bench-${run.toLowerCase()}-${round}@guest.example` },
          }),
        }), 201, "the channel's booking");
    const desk = () =>
      timed(() =>
        fetch(`${v1}/reservations`, {
          method: "POST", headers,
          body: JSON.stringify({ ...stay, ...nights(7), propertyId: property(5), guestId: guest(200 + round), status: "confirmed" }),
        }), 201, "the front desk's booking");
    const [first, second] = round % 2 === 0 ? [channel, desk] : [desk, channel];
    const a = await first();
    const b = await second();
    if (round === 0) continue;
    channelRuns.push(round % 2 === 0 ? a : b);
    deskRuns.push(round % 2 === 0 ? b : a);
  }
  context.log(`  POST /v1/external/properties/{id}/reservations: median ${median(channelRuns).toFixed(1)} ms; ` +
    `POST /v1/reservations: median ${median(deskRuns).toFixed(1)} ms`);
  return {
    ari: taken("ari"),
    externalReadById: taken("externalReadById"),
    runs,
    ariBytes: new TextEncoder().encode(text).byteLength,
    channelWrite: { runsMs: channelRuns, medianMs: median(channelRuns) },
    frontDeskWrite: { runsMs: deskRuns, medianMs: median(deskRuns) },
  };
}

// The March list's statement and the availability call, each under the bench owner's
// request context in the large tenant, timed by EXPLAIN ANALYZE (one run to warm up).
export async function timePlans(context: ReadContext): Promise<StatisticsCase> {
  const filter = listReservationsQuery.parse(MARCH);
  const list = await statementOf("the March list", (db) => listReservations(db, filter, filter));
  const scope = contextStatement(context.claims, tenantId(LARGE_TENANT.number));
  const availability = {
    statement: "select private.availability($1, $2, $3, $4, 0)",
    parameters: [AVAILABILITY.propertyId, AVAILABILITY.arrival, AVAILABILITY.departure, Number(AVAILABILITY.adults)],
  };
  return await inRequestContext(context.sql, scope, async (trx) => {
    const listRuns: number[] = [];
    const availabilityRuns: number[] = [];
    let outline = "";
    let nodes = "";
    for (let run = 0; run <= TIMED_RUNS; run++) {
      const listed = await explain(trx, list.sql, [...list.parameters], "analyze, buffers");
      const asked = await explain(trx, availability.statement, availability.parameters, "analyze, buffers");
      if (run === 0) continue;
      outline = planOutline(listed);
      nodes = planNodes(listed.Plan);
      listRuns.push(listed["Execution Time"]);
      availabilityRuns.push(asked["Execution Time"]);
    }
    return {
      list: { medianMs: median(listRuns), runsMs: listRuns, outline, nodes },
      availability: { medianMs: median(availabilityRuns), runsMs: availabilityRuns },
    };
  });
}

async function timed(work: () => Promise<Response>, expected: number, label: string): Promise<number> {
  const started = performance.now();
  const response = await work();
  const text = await response.text();
  const ms = performance.now() - started;
  assert.equal(response.status, expected, `${label} answered ${response.status}: ${text}`);
  return ms;
}

export async function selling(context: ReadContext, statistics: PlansWithoutStatistics): Promise<SellingResult> {
  const headers = { ...headersFor(context, LARGE_TENANT.number), "content-type": "application/json" };
  const v1 = `${context.origin}${V1_PATH}`;

  // The answer is what the bench claims: ten room types, each with its plans quoted.
  const checked = await fetch(`${v1}${availabilityPath}`, { headers });
  const answer = await checked.json() as { roomTypes: { ratePlans: unknown[] }[] };
  assert.equal(checked.status, 200, `availability answered ${checked.status}: ${JSON.stringify(answer)}`);
  assert.equal(answer.roomTypes.length, 10, "the property sells ten room types");
  assert.equal(answer.roomTypes.reduce((sum, type) => sum + type.ratePlans.length, 0), 41, "four plans a type, five for the suite");

  const availabilityScript = `request = function() return wrk.format("GET", "${V1_PATH}${availabilityPath}") end`;
  const byIdScript = `request = function()
  return wrk.format("GET", string.format("${V1_PATH}/reservations/b7%06d-0000-4000-8000-${digits}", math.random(1, ${LARGE_TENANT.reservations})))
end`;
  const point = (requestScript: string, connections: number, seconds: number) =>
    ({ origin: context.origin, requestScript, headers: headersFor(context, LARGE_TENANT.number), connections, seconds });
  for (const script of [availabilityScript, byIdScript]) await runLoad(point(script, SELLING_CONNECTIONS, WARM_UP_SECONDS));
  const runs: SellingResult["runs"] = [];
  for (const route of ["availability", "readById", "readById", "availability"] as const) {
    const result = await runLoad({
      ...point(route === "availability" ? availabilityScript : byIdScript, SELLING_CONNECTIONS, context.seconds), observe: context.sql,
    });
    runs.push({ route, result });
    context.log(`  ${route === "availability" ? `GET /v1${availabilityPath}` : "GET /v1/reservations/{id}"} c=${SELLING_CONNECTIONS}: ${describe(result)}`);
  }
  const taken = (route: "availability" | "readById") => combineRuns(runs.filter((run) => run.route === route).map((run) => run.result));

  // 365 days of ten plans (the first three properties' plans with their own prices) in
  // one request, a price that changes each round; and one stay booked and priced, each
  // round on nights no other round uses.
  const plans = [1, 2, 3].flatMap((p) => [1, 3, 4, 5].map((j) => ratePlan(p, j))).slice(0, 10);
  const bulkRuns: number[] = [];
  const writeRuns: number[] = [];
  for (let round = 0; round <= WRITE_ROUNDS; round++) {
    const changes = plans.map((ratePlanId) => ({ ratePlanId, from: "2028-01-01", to: "2028-12-30", price: 13000 + (round % 2) * 500 }));
    const bulk = () => timed(() => fetch(`${v1}/rate-calendar`, { method: "PATCH", headers, body: JSON.stringify({ changes }) }), 200, "the bulk calendar update");
    const arrival = new Date(Date.UTC(2029, 0, 1 + round * 7)).toISOString().slice(0, 10);
    const departure = new Date(Date.UTC(2029, 0, 4 + round * 7)).toISOString().slice(0, 10);
    const booking = {
      propertyId: property(5), roomTypeId: roomType(5, 1), ratePlanId: ratePlan(5, 1), guestId: guest(1 + round),
      checkIn: arrival, checkOut: departure, adults: 2, children: 0, status: "confirmed", source: "direct",
    };
    const write = () => timed(() => fetch(`${v1}/reservations`, { method: "POST", headers, body: JSON.stringify(booking) }), 201, "the booking");
    // In turns, so that neither side has the quieter moments; round 0 warms up.
    const [first, second] = round % 2 === 0 ? [bulk, write] : [write, bulk];
    const a = await first();
    const b = await second();
    if (round === 0) continue;
    bulkRuns.push(round % 2 === 0 ? a : b);
    writeRuns.push(round % 2 === 0 ? b : a);
  }
  context.log(`  PATCH /v1/rate-calendar, 365 days x ${plans.length} plans: median ${median(bulkRuns).toFixed(1)} ms; ` +
    `POST /v1/reservations: median ${median(writeRuns).toFixed(1)} ms`);

  // The race: a room type of one unit at the fourth property, its one room booked by 50
  // requests at once while availability is loaded beside them.
  const suffix = Date.now().toString(36).toUpperCase();
  const made = await fetch(`${v1}/room-types`, { method: "POST", headers, body: JSON.stringify({
    propertyId: property(4), code: `RACE-${suffix}`, name: "The last room", standardOccupancy: 2, maxOccupancy: 2,
  }) });
  assert.equal(made.status, 201, `the race's room type: ${await made.text()}`);
  const raceType = made.headers.get("location")!.split("/").pop()!;
  const unit = await fetch(`${v1}/units`, { method: "POST", headers, body: JSON.stringify({
    propertyId: property(4), roomTypeId: raceType, name: `Race ${suffix}`, capacity: 2,
  }) });
  assert.equal(unit.status, 201, `the race's unit: ${await unit.text()}`);
  const load = runLoad(point(availabilityScript, SELLING_CONNECTIONS, context.seconds));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const raceStarted = performance.now();
  const answers = await Promise.all(Array.from({ length: RACE_BOOKINGS }, (_, i) =>
    fetch(`${v1}/reservations`, { method: "POST", headers, body: JSON.stringify({
      propertyId: property(4), roomTypeId: raceType, guestId: guest(100 + i), checkIn: "2030-03-01", checkOut: "2030-03-04",
      adults: 2, children: 0, totalAmount: 30000, status: "confirmed", source: "direct",
    }) }).then(async (response) => ({ status: response.status, body: await response.text() }))));
  const raceMs = performance.now() - raceStarted;
  const underLoad = await load;
  const stored = answers.filter((answer) => answer.status === 201).length;
  const refused = answers.filter((answer) => answer.status === 409 && answer.body.includes("urn:pms:problem:no-availability")).length;
  const [held] = await context.sql<{ stays: number }[]>`
    select count(*)::int as stays from public.reservations
    where tenant_id = ${tenantId(LARGE_TENANT.number)}::uuid and room_type_id = ${raceType}::uuid`;
  assert.equal(held?.stays, stored, "the stays stored are the bookings answered 201");
  context.log(`  the race: ${RACE_BOOKINGS} bookings of the last room in ${raceMs.toFixed(0)} ms, ${stored} stored, ${refused} refused ` +
    `no-availability; availability beside it: ${describe(underLoad)}`);

  const channelMeasures = await channels(context, headers);

  return {
    property: AVAILABILITY.propertyId,
    statistics,
    connections: SELLING_CONNECTIONS,
    availability: taken("availability"),
    readById: taken("readById"),
    runs,
    bulkCalendar: { days: 365, plans: plans.length, runsMs: bulkRuns, medianMs: median(bulkRuns) },
    singleWrite: { runsMs: writeRuns, medianMs: median(writeRuns) },
    race: { bookings: RACE_BOOKINGS, stored, refused, other: RACE_BOOKINGS - stored - refused, ms: raceMs, underLoad },
    channels: channelMeasures,
  };
}
