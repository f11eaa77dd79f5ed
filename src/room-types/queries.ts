import type { Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createRoomTypeBody, listRoomTypesQuery, updateRoomTypeBody } from "./schema.ts";

const columns = camelSelection([
  "id", "property_id", "code", "name", "description", "standard_occupancy", "max_occupancy", "max_adults", "max_children",
  "status", "created_at", "updated_at",
]);

// Every query runs under the request's context, where RLS limits rows to its tenant.
export function listRoomTypes(db: Reads, filter: z.output<typeof listRoomTypesQuery>, page: Page) {
  let query = db.selectFrom("room_types").select(columns).orderBy("property_id").orderBy("code").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.status) query = query.where("status", "in", filter.status);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findRoomType(db: Reads, id: string) {
  return db.selectFrom("room_types").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockRoomType(db: Transaction<DB>, id: string) {
  return db.selectFrom("room_types").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertRoomType(db: Transaction<DB>, input: z.output<typeof createRoomTypeBody>) {
  return db.insertInto("room_types").values(snakeKeys(input)).returning(columns).executeTakeFirstOrThrow();
}

export function updateRoomType(db: Transaction<DB>, id: string, input: z.output<typeof updateRoomTypeBody>) {
  return db.updateTable("room_types").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

export function deleteRoomType(db: Transaction<DB>, id: string) {
  return db.deleteFrom("room_types").where("id", "=", id).executeTakeFirst();
}
