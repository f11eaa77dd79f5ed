import type { Transaction } from "kysely";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { z } from "zod";
import type { createPropertyBody, listPropertiesQuery, updatePropertyBody } from "./schema.ts";

const columns = camelSelection([
  "id", "name", "timezone", "currency", "address_line1", "address_line2", "city", "region", "postal_code",
  "country_code", "email", "phone", "check_in_time", "check_out_time", "status", "created_at", "updated_at",
]);

// Every query runs under the request's context, where RLS limits rows to its tenant.
export function listProperties(db: Reads, filter: z.output<typeof listPropertiesQuery>, page: Page) {
  let query = db.selectFrom("properties").select(columns).orderBy("name").orderBy("id");
  if (filter.status) query = query.where("status", "=", filter.status);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findProperty(db: Reads, id: string) {
  return db.selectFrom("properties").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockProperty(db: Transaction<DB>, id: string) {
  return db.selectFrom("properties").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertProperty(db: Transaction<DB>, input: z.output<typeof createPropertyBody>) {
  return db.insertInto("properties").values(snakeKeys(input)).returning(columns).executeTakeFirstOrThrow();
}

export function updateProperty(db: Transaction<DB>, id: string, input: z.output<typeof updatePropertyBody>) {
  return db.updateTable("properties").set(snakeKeys(input)).where("id", "=", id).returning(columns)
    .executeTakeFirst();
}

export function deleteProperty(db: Transaction<DB>, id: string) {
  return db.deleteFrom("properties").where("id", "=", id).executeTakeFirst();
}
