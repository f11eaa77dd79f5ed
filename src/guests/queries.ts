import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Listed, type Page, pageAhead, pageWithTotal, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createGuestBody, listGuestsQuery, updateGuestBody } from "./schema.ts";

const columns = camelSelection([
  "id", "first_name", "last_name", "email", "phone", "locale", "country_code", "marketing_consent",
  "marketing_consent_at", "notes", "email_undeliverable_at", "email_undeliverable_reason", "created_at", "updated_at",
]);

// What the caller typed, matched literally: % and _ would otherwise be LIKE wildcards
// (backslash is LIKE's default escape character).
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, "\\$&")}%`;
}

// Every query runs under the request's context, where RLS limits rows to its tenant.
// Names sort by lower() because the database collates bytewise (C) and
// guests_tenant_name_idx is built on lower(); the raw names would put "de Vries" after "Zhou".
export function listGuests(db: Reads, filter: z.output<typeof listGuestsQuery>, page: Page): Promise<Listed<Guest>> {
  if (filter.q && !filter.email) return searchGuests(db, containing(filter.q), page);
  let query = db.selectFrom("guests").select(columns)
    .orderBy((eb) => eb.fn("lower", ["last_name"]))
    .orderBy((eb) => eb.fn("lower", ["first_name"]))
    .orderBy("id");
  // lower(email), as guests_tenant_email_idx is built: addresses are stored as given. The
  // few guests of one address are those a search beside it looks through.
  if (filter.email) query = query.where((eb) => eb(eb.fn("lower", ["email"]), "=", filter.email));
  if (filter.q) {
    const pattern = containing(filter.q);
    query = query.where((eb) =>
      eb.or([eb("first_name", "ilike", pattern), eb("last_name", "ilike", pattern), eb("email", "ilike", pattern)])
    );
  }
  return paginate(query, page, { tenant: ["tenant_id"] });
}

type Guest = Awaited<ReturnType<typeof findGuest>> & object;

// The search: private.guest_search_page finds the matches with the trigram index (which
// RLS keeps a plain ILIKE from using: supabase/migrations/20261129000100_large_tenant_lists.sql),
// sorts and counts them there, and names the page's ids in order with the total; the list
// reads those rows under RLS. Sorting every match is what finds the page, so the total
// comes with it: every count but none is exact here, and says so by leaving
// Preference-Applied out (docs/api.md, Lists: pages and counts).
async function searchGuests(db: Reads, pattern: string, page: Page): Promise<Listed<Guest>> {
  const ahead = page.count === "none" ? 1 : 0;
  const found = (limit: number) =>
    sql<{ ids: string[]; total: number }>`private.guest_search_page(${pattern}, ${limit}, ${page.offset})`.as("found");
  const rows = await db.selectFrom("guests")
    .innerJoin(found(page.limit + ahead), (join) => join.on(sql<boolean>`guests.id = any(found.ids)`))
    .select(columns).select(sql<number>`found.total`.as("__total"))
    .orderBy(sql`array_position(found.ids, guests.id)`)
    .execute();
  if (ahead) return pageAhead(rows.map(({ __total: _, ...row }) => row), page, null, "none");
  // A page past the end has no row to carry the total: the function is asked for it alone.
  return await pageWithTotal<Guest>(rows, page, async () =>
    (await db.selectFrom(found(0)).select("found.total").executeTakeFirst())?.total ?? 0);
}

export function findGuest(db: Reads, id: string) {
  return db.selectFrom("guests").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockGuest(db: Transaction<DB>, id: string) {
  return db.selectFrom("guests").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertGuest(db: Transaction<DB>, input: z.output<typeof createGuestBody>) {
  return db.insertInto("guests").values(snakeKeys(input)).returning(columns).executeTakeFirstOrThrow();
}

export function updateGuest(db: Transaction<DB>, id: string, input: z.output<typeof updateGuestBody>) {
  return db.updateTable("guests").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

// Clears the undeliverable mark of the guest's address; the database stamps when, and
// refuses it to anyone but the tenant's managers. A guest without a mark is read, not
// written (its updatedAt and ETag stay). Undefined when there is no such guest.
export async function clearEmailUndeliverable(db: Transaction<DB>, id: string) {
  const cleared = await db.updateTable("guests").set({ email_undeliverable_at: null, email_undeliverable_reason: null })
    .where("id", "=", id).where("email_undeliverable_at", "is not", null).returning(columns).executeTakeFirst();
  return cleared ?? await findGuest(db, id);
}

export function deleteGuest(db: Transaction<DB>, id: string) {
  return db.deleteFrom("guests").where("id", "=", id).executeTakeFirst();
}
