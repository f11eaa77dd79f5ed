import { type RawBuilder, sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import type { Database } from "../db/database.types.ts";
import { type Listed, type Page, pageAhead, pageWithTotal } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { TenantRole } from "../http/request-scope.ts";
import type { updateTenantBody } from "./schema.ts";

const columns = camelSelection(["id", "name", "sender_email", "sender_name", "payment_page_base_url", "created_at", "updated_at"]);

type MyTenant = { tenantId: string; name: string; role: TenantRole };

// The set-returning functions page as `paginate` does tables, counting exactly or not at
// all: the planner knows nothing of how many rows a function returns (it assumes 1,000), and
// a person's tenants or a tenant's members are few enough to count. So count=planned and
// count=estimated are answered as exact ones.
async function pageOfFunction<T>(db: Reads, source: "list_my_tenants" | "list_tenant_members", columns: RawBuilder<unknown>, order: RawBuilder<unknown>, page: Page): Promise<Listed<T>> {
  const from = sql`from public.${sql.raw(source)}()`;
  if (page.count === "none") {
    const { rows } = await sql<T>`select ${columns} ${from} order by ${order} limit ${page.limit + 1} offset ${page.offset}`.execute(db);
    return pageAhead(rows, page, null, "none");
  }
  const { rows } = await sql<T & { __total: number }>`
    select ${columns}, count(*) over () as __total ${from} order by ${order} limit ${page.limit} offset ${page.offset}`.execute(db);
  return pageWithTotal(rows, page, async () => {
    const { rows: [row] } = await sql<{ n: number }>`select count(*) as n ${from}`.execute(db);
    return row?.n ?? 0;
  });
}

const myTenantColumns = sql`tenant_id as "tenantId", name, role`;

export function listMyTenants(db: Reads, page: Page) {
  return pageOfFunction<MyTenant>(db, "list_my_tenants", myTenantColumns, sql`name, tenant_id`, page);
}

// Every membership at once, in the order the paged list uses.
export async function myTenants(db: Reads): Promise<MyTenant[]> {
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

export function findTenant(db: Reads, id: string) {
  return db.selectFrom("tenants").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockTenant(db: Transaction<DB>, id: string) {
  return db.selectFrom("tenants").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function updateTenant(db: Transaction<DB>, id: string, input: Partial<z.output<typeof updateTenantBody>>) {
  return db.updateTable("tenants").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

export function deleteTenant(db: Transaction<DB>, id: string) {
  return db.deleteFrom("tenants").where("id", "=", id).executeTakeFirst();
}

type MemberRow = { userId: string; email: string; fullName: string | null; role: TenantRole; createdAt: string; updatedAt: string };

const memberColumns = sql`user_id as "userId", email, full_name as "fullName", role, created_at as "createdAt", updated_at as "updatedAt"`;

export function listMembers(db: Reads, page: Page) {
  return pageOfFunction<MemberRow>(db, "list_tenant_members", memberColumns, sql`email, user_id`, page);
}

export async function findMember(db: Reads, userId: string): Promise<MemberRow | undefined> {
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
