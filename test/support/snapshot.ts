// A tenant's rows in every tenant-owned table, as text: equal snapshots before and after
// a refused request mean the request changed nothing of the tenant's.
import type postgres from "postgres";

const TABLES = ["tenants", "tenant_memberships", "properties", "room_types", "units", "unit_blocks", "rate_plans",
  "rate_plan_days", "guests", "reservations", "payments", "payment_links", "tasks", "access_codes", "notifications",
  "notification_events", "notification_preferences", "api_keys", "api_key_properties", "idempotency_keys",
  "calendar_feeds", "inbox_messages", "push_subscriptions"];

export async function tenantSnapshot(sql: postgres.Sql, tenantId: string): Promise<string> {
  const parts: string[] = [];
  for (const table of TABLES) {
    const column = table === "tenants" ? "id" : "tenant_id";
    const [row] = await sql`
      select coalesce(string_agg(t::text, '|' order by t::text), '') as rows
      from ${sql("public")}.${sql(table)} t where ${sql(column)} = ${tenantId}`;
    parts.push(`${table}:${row!.rows}`);
  }
  return parts.join("\n");
}
