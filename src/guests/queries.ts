import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
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
export function listGuests(db: Reads, filter: z.output<typeof listGuestsQuery>, page: Page) {
  let query = db.selectFrom("guests").select(columns)
    .orderBy((eb) => eb.fn("lower", ["last_name"]))
    .orderBy((eb) => eb.fn("lower", ["first_name"]))
    .orderBy("id");
  // The matches are found with the trigram index, which RLS keeps a plain ILIKE from
  // using (supabase/migrations/20261129000100_large_tenant_lists.sql); the list reads
  // them by id, under RLS.
  if (filter.q) {
    query = query.where(sql<boolean>`guests.id = any(array(select private.guest_ids_matching(${containing(filter.q)})))`);
  }
  // lower(email), as guests_tenant_email_idx is built: addresses are stored as given.
  if (filter.email) query = query.where((eb) => eb(eb.fn("lower", ["email"]), "=", filter.email));
  // Read by id, every match of a search is sorted for the page: counted along.
  return paginate(query, page, { tenant: ["tenant_id"] }, filter.q ? "along" : "apart");
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
