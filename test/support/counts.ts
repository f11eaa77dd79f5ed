// For the tests of how lists count (Prefer: count=..., src/db/pagination.ts): many rows
// made at once, and the planner's estimate asked by hand in a request's context.
import type postgres from "postgres";

// Reservations and guests written straight into their tables as postgres, with the
// triggers off as bench/sql/seed-large-tenant.sql writes them: a thousand rows for a list
// to count in milliseconds, and nothing that would follow from them (no notification,
// task or webhook event) but their status tallies, which the list's total reads. Then the tables' statistics are brought up to date, as
// autovacuum would a little later, so that the planner knows the tenant's share.
export async function insertRows(
  sql: postgres.Sql,
  at: { tenantId: string; propertyId: string; guestId: string; currency: string },
  rows: { reservations?: Record<string, number>; guests?: number },
): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    for (const [status, count] of Object.entries(rows.reservations ?? {})) {
      await tx`
        insert into public.reservations (tenant_id, property_id, guest_id, check_in, check_out, status, currency, total_amount)
        select ${at.tenantId}, ${at.propertyId}, ${at.guestId}, date '2031-01-01' + n, date '2031-01-02' + n,
               ${status}, ${at.currency}, 0
        from generate_series(1, ${count}::int) n`;
    }
    // The status tallies the reservation trigger would have written for them.
    await tx`
      insert into public.reservation_status_tallies (tenant_id, property_id, status, reservations)
      select ${at.tenantId}, ${at.propertyId}, status, count::integer
      from jsonb_each_text(${tx.json(rows.reservations ?? {})}) as made(status, count)`;
    if (rows.guests) {
      await tx`
        insert into public.guests (tenant_id, first_name, last_name)
        select ${at.tenantId}, 'Bulk', 'Guest ' || lpad(n::text, 5, '0') from generate_series(1, ${rows.guests}::int) n`;
    }
  });
  await sql`analyze public.reservations`;
  await sql`analyze public.guests`;
}

// The request context a statement of the API runs in, set by hand: a member of the tenant
// through the session API, or an integration's key for a property.
export type Context =
  | { role: "authenticated"; userId: string; tenantId: string }
  | { role: "api_integration"; tenantId: string; propertyId: string };

// The top row count of the plan of `query` in `context`: what EXPLAIN says the statement
// would return, the policies applied. In a transaction of its own, whose settings end with it.
export async function plannedByHand(
  sql: postgres.Sql,
  context: Context,
  query: string,
  parameters: postgres.ParameterOrJSON<never>[],
): Promise<number> {
  return await sql.begin(async (tx) => {
    const claims = context.role === "authenticated" ? JSON.stringify({ sub: context.userId, role: "authenticated" }) : "";
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('app.tenant_id', ${context.tenantId}, true),
                    set_config('app.property_ids', ${context.role === "api_integration" ? `{${context.propertyId}}` : ""}, true),
                    set_config('app.api_scopes', ${context.role === "api_integration" ? "{reservations:read,payments:write}" : ""}, true),
                    set_config('role', ${context.role}, true)`;
    const [explained] = await tx.unsafe<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }[]>(
      `explain (format json) ${query}`,
      parameters,
    );
    return explained!["QUERY PLAN"][0].Plan["Plan Rows"];
  });
}
