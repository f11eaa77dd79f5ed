// The benchmark's rows and how to name them. bench/sql/seed.sql writes them with ids
// derived from numbers, so a load generator names any tenant, reservation or guest
// without asking the database; the bench owner is an owner of every bench tenant, so
// one access token serves them all.

export const TENANTS = 1000;
export const RESERVATIONS_PER_TENANT = 1000;
export const GUESTS_PER_TENANT = 100;
// Reservations 601..1000 of each tenant are confirmed (bench/sql/seed.sql): what check-ins take.
export const FIRST_CONFIRMED = 601;
export const CONFIRMED_PER_TENANT = 400;
// The tenant whose reservations the read benchmarks ask for; it stays between runs.
export const READ_TENANT = 1;
// The last confirmed reservations of each tenant (991..1000) are the notification latency
// part's (bench/notification-latency.ts); the write benchmark's check-ins count up from
// FIRST_CONFIRMED and stop short of them, so no part checks in a stay another has used.
export const LATENCY_CONFIRMED_PER_TENANT = 10;

// One tenant much larger than the others, beside them (bench/sql/seed-large-tenant.sql):
// seeded for the large-tenant part and dropped with tenants 2-1000 at the end of a run.
// Its number follows theirs, so its ids follow the same patterns, but for its
// reservations, whose numbers need six digits (seed-large-tenant.sql says how).
export const LARGE_TENANT = {
  number: TENANTS + 1,
  properties: 5,
  units: 500,
  guests: 20_000,
  // Stays per unit, a week apart: 500 units x 200 weeks, almost four years.
  staysPerUnit: 200,
  reservations: 500 * 200,
} as const;

// Made through Supabase Auth's admin API with this id (bench/run.ts), kept between runs.
export const benchOwner = {
  userId: "b0e00000-0000-4000-8000-000000000001",
  email: "bench-owner@bench.pms.test",
  password: "bench-owner-password-1",
};

// The pipeline's staff (bench/pipeline.ts): members of each of its tenants, whom every
// check-in there reaches in-app. Made through Auth like the owner, kept between runs.
export const benchStaff = [2, 3, 4].map((n) => ({
  userId: `b0e00000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  email: `bench-staff-${n - 1}@bench.pms.test`,
  password: `bench-staff-password-${n - 1}`,
}));

// The 12 digits that end every id of tenant n.
export function tenantDigits(n: number): string {
  return String(n).padStart(12, "0");
}

// Every bench tenant's id starts so: what a LIKE over tenant ids matches.
export const TENANT_ID_PREFIX = "b1e00000-0000-4000-8000-";

export function tenantId(n: number): string {
  return `${TENANT_ID_PREFIX}${tenantDigits(n)}`;
}

export function reservationId(tenant: number, r: number): string {
  return `b5e${String(r).padStart(5, "0")}-0000-4000-8000-${tenantDigits(tenant)}`;
}

// Lua that sets `tenant_id(n)`, `reservation_id(n, r)` and `guest_id(n, g)` in a wrk
// script, the same patterns as above.
export const LUA_IDS = `
local function tenant_id(n) return string.format("b1e00000-0000-4000-8000-%012d", n) end
local function reservation_id(n, r) return string.format("b5e%05d-0000-4000-8000-%012d", r, n) end
local function guest_id(n, g) return string.format("b4e%05d-0000-4000-8000-%012d", g, n) end
local function with_tenant(n)
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  headers["x-tenant-id"] = tenant_id(n)
  return headers
end
`;
