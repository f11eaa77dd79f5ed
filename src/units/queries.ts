import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createUnitBody, listUnitsQuery, updateUnitBody } from "./schema.ts";

const columns = camelSelection([
  "id", "property_id", "room_type_id", "name", "type", "capacity", "floor", "status", "created_at", "updated_at",
]);

// Every query runs under the request's context, where RLS limits rows to its tenant.
export function listUnits(db: Reads, filter: z.output<typeof listUnitsQuery>, page: Page) {
  let query = db.selectFrom("units").select(columns).orderBy("property_id").orderBy("name").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.roomTypeId) query = query.where("room_type_id", "=", filter.roomTypeId);
  if (filter.status) query = query.where("status", "in", filter.status);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findUnit(db: Reads, id: string) {
  return db.selectFrom("units").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockUnit(db: Transaction<DB>, id: string) {
  return db.selectFrom("units").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertUnit(db: Transaction<DB>, input: z.output<typeof createUnitBody>) {
  const { roomTypeId, ...rest } = input;
  // The room type left null is filled by the unit trigger: its kind and capacity's type.
  return db.insertInto("units").values({ ...snakeKeys(rest), room_type_id: roomTypeId ?? sql<string>`null` })
    .returning(columns).executeTakeFirstOrThrow();
}

export function updateUnit(db: Transaction<DB>, id: string, input: z.output<typeof updateUnitBody>) {
  return db.updateTable("units").set(snakeKeys(input)).where("id", "=", id).returning(columns).executeTakeFirst();
}

export function deleteUnit(db: Transaction<DB>, id: string) {
  return db.deleteFrom("units").where("id", "=", id).executeTakeFirst();
}
