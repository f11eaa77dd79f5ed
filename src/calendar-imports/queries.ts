import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createCalendarImportBody, listCalendarImportsQuery, updateCalendarImportBody } from "./schema.ts";

const columns = camelSelection([
  "id", "property_id", "unit_id", "name", "url", "next_fetch_at", "last_fetched_at", "last_succeeded_at", "last_outcome",
  "last_error_code", "last_error", "failures", "failing_since", "events", "conflicts", "created_by", "created_at",
  "updated_at",
]);

export async function listCalendarImports(db: Reads, filter: z.output<typeof listCalendarImportsQuery>, page: Page) {
  let query = db.selectFrom("calendar_imports").select(columns).orderBy("created_at", "desc").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.unitId) query = query.where("unit_id", "=", filter.unitId);
  return await paginate(query, page, { tenant: ["tenant_id"], property: "property_id" });
}

export async function findCalendarImport(db: Reads, id: string) {
  return await db.selectFrom("calendar_imports").select(columns).where("id", "=", id).executeTakeFirst();
}

export async function lockCalendarImport(db: Transaction<DB>, id: string) {
  return await db.selectFrom("calendar_imports").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

// The property comes from the unit (private.calendar_import_before_write).
export async function insertCalendarImport(db: Transaction<DB>, input: z.output<typeof createCalendarImportBody>) {
  return await db.insertInto("calendar_imports")
    .values({ ...snakeKeys(input), property_id: sql<string>`null` })
    .returning(columns).executeTakeFirstOrThrow();
}

export async function updateCalendarImport(db: Transaction<DB>, id: string, input: z.output<typeof updateCalendarImportBody>) {
  return await db.updateTable("calendar_imports")
    .set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

// The import's holds go with it (unit_blocks_tenant_id_calendar_import_id_fkey).
export async function deleteCalendarImport(db: Transaction<DB>, id: string) {
  return await db.deleteFrom("calendar_imports").where("id", "=", id).executeTakeFirstOrThrow();
}
