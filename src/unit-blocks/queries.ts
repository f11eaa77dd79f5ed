import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createUnitBlockBody, listUnitBlocksQuery, updateUnitBlockBody } from "./schema.ts";

const columns = camelSelection(["id", "property_id", "unit_id", "starts_on", "ends_on", "reason", "calendar_import_id", "created_at", "updated_at"]);

// Every query runs under the request's context, where RLS limits rows to its tenant.
export function listUnitBlocks(db: Reads, filter: z.output<typeof listUnitBlocksQuery>, page: Page) {
  let query = db.selectFrom("unit_blocks").select(columns).orderBy("starts_on").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.unitId) query = query.where("unit_id", "=", filter.unitId);
  if (filter.from) query = query.where("ends_on", ">", filter.from);
  if (filter.to) query = query.where("starts_on", "<", filter.to);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findUnitBlock(db: Reads, id: string) {
  return db.selectFrom("unit_blocks").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockUnitBlock(db: Transaction<DB>, id: string) {
  return db.selectFrom("unit_blocks").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertUnitBlock(db: Transaction<DB>, input: z.output<typeof createUnitBlockBody>) {
  // The property is the unit's, filled by the block trigger.
  return db.insertInto("unit_blocks").values({ ...snakeKeys(input), property_id: sql<string>`null` })
    .returning(columns).executeTakeFirstOrThrow();
}

export function updateUnitBlock(db: Transaction<DB>, id: string, input: z.output<typeof updateUnitBlockBody>) {
  return db.updateTable("unit_blocks").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

export function deleteUnitBlock(db: Transaction<DB>, id: string) {
  return db.deleteFrom("unit_blocks").where("id", "=", id).executeTakeFirst();
}
