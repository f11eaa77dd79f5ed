import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/database.types.ts";
import type { Page } from "../db/pagination.ts";
import type { Pagination } from "../http/respond.ts";
import type { TenantRole } from "./request-scope.ts";
import type { updateTenantBody } from "./schema.ts";

const columns = camelSelection(["id", "name", "sender_email", "sender_name", "payment_page_base_url", "created_at", "updated_at"]);

type MyTenant = { tenantId: string; name: string; role: TenantRole };

// The set-returning functions page like `paginate` does for tables: the window count rides
// on the rows, and only a page past the end asks for the count on its own.
async function pageOf<T>(
  rows: (T & { total: number })[],
  page: Page,
  count: () => Promise<number>,
): Promise<{ data: T[]; pagination: Pagination }> {
  const total = rows[0]?.total ?? (page.offset > 0 ? await count() : 0);
  return { data: rows.map(({ total: _, ...row }) => row as T), pagination: { ...page, total } };
}

async function countOf(db: Transaction<DB>, source: "list_my_tenants" | "list_tenant_members"): Promise<number> {
  const { rows: [row] } = await sql<{ n: number }>`select count(*) as n from public.${sql.raw(source)}()`.execute(db);
  return row?.n ?? 0;
}

const myTenantColumns = sql`tenant_id as "tenantId", name, role`;

export async function listMyTenants(db: Transaction<DB>, page: Page) {
  const { rows } = await sql<MyTenant & { total: number }>`
    select ${myTenantColumns}, count(*) over () as total
    from public.list_my_tenants() order by name, tenant_id limit ${page.limit} offset ${page.offset}`.execute(db);
  return pageOf(rows, page, () => countOf(db, "list_my_tenants"));
}

// Every membership at once, in the order the paged list uses.
export async function myTenants(db: Transaction<DB>): Promise<MyTenant[]> {
  const { rows } = await sql<MyTenant>`
    select ${myTenantColumns} from public.list_my_tenants() order by name, tenant_id`.execute(db);
  return rows;
}

// The caller becomes its owner (create_tenant); the transaction then acts in the new
// tenant so its settings go through the same policies as any later change.
export async function createTenant(db: Transaction<DB>, name: string) {
  const { tenantContext: _, ...created } = await db
    .selectFrom(sql<Database["public"]["Tables"]["tenants"]["Row"]>`public.create_tenant(${name})`.as("t"))
    .select([...columns, sql<string>`set_config('app.tenant_id', t.id::text, true)`.as("tenantContext")])
    .executeTakeFirstOrThrow();
  return created;
}

export function findTenant(db: Transaction<DB>, id: string, options: { lock?: boolean } = {}) {
  const query = db.selectFrom("tenants").select(columns).where("id", "=", id);
  return (options.lock ? query.forUpdate() : query).executeTakeFirst();
}

export function updateTenant(db: Transaction<DB>, id: string, input: Partial<z.output<typeof updateTenantBody>>) {
  return db.updateTable("tenants").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

export function deleteTenant(db: Transaction<DB>, id: string) {
  return db.deleteFrom("tenants").where("id", "=", id).executeTakeFirst();
}

type MemberRow = { userId: string; email: string; fullName: string | null; role: TenantRole; createdAt: string; updatedAt: string };

const memberColumns = sql`user_id as "userId", email, full_name as "fullName", role, created_at as "createdAt", updated_at as "updatedAt"`;

export async function listMembers(db: Transaction<DB>, page: Page) {
  const { rows } = await sql<MemberRow & { total: number }>`
    select ${memberColumns}, count(*) over () as total
    from public.list_tenant_members() order by email, user_id limit ${page.limit} offset ${page.offset}`.execute(db);
  return pageOf(rows, page, () => countOf(db, "list_tenant_members"));
}

export async function findMember(db: Transaction<DB>, userId: string): Promise<MemberRow | undefined> {
  const { rows: [row] } = await sql<MemberRow>`
    select ${memberColumns} from public.list_tenant_members() where user_id = ${userId}`.execute(db);
  return row;
}

export async function addMember(db: Transaction<DB>, email: string, role: TenantRole): Promise<string> {
  const { rows: [row] } = await sql<{ userId: string }>`
    select user_id as "userId" from public.add_tenant_member(${email}, ${role}::public.tenant_role)`.execute(db);
  if (!row) throw new Error("add_tenant_member returned no row");
  return row.userId;
}

export async function changeMemberRole(db: Transaction<DB>, userId: string, role: TenantRole): Promise<void> {
  await sql`select public.change_tenant_member_role(${userId}::uuid, ${role}::public.tenant_role)`.execute(db);
}

export async function removeMember(db: Transaction<DB>, userId: string): Promise<void> {
  await sql`select public.remove_tenant_member(${userId}::uuid)`.execute(db);
}
