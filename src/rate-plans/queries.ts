import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createRatePlanBody, listRatePlansQuery, updateRatePlanBody } from "./schema.ts";

const columns = [
  ...camelSelection([
    "id", "property_id", "name", "code", "currency", "nightly_price", "min_stay", "max_stay", "cancellation_policy",
    "free_cancellation_hours", "active", "room_type_id", "extra_adult_price", "extra_child_price", "derived_from_id",
    "derived_amount", "created_at", "updated_at",
  ]),
  // A numeric, which the driver answers as text.
  sql<number | null>`derived_percent::float8`.as("derivedPercent"),
];

// Every query runs under the request's context, where RLS limits rows to its tenant.
export function listRatePlans(db: Reads, filter: z.output<typeof listRatePlansQuery>, page: Page) {
  let query = db.selectFrom("rate_plans").select(columns).orderBy("property_id").orderBy("code").orderBy("id");
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.roomTypeId) query = query.where("room_type_id", "=", filter.roomTypeId);
  if (filter.active !== undefined) query = query.where("active", "=", filter.active);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findRatePlan(db: Reads, id: string) {
  return db.selectFrom("rate_plans").select(columns).where("id", "=", id).executeTakeFirst();
}

// The same under lock, held until the write's transaction ends: for a conditional update.
export function lockRatePlan(db: Transaction<DB>, id: string) {
  return db.selectFrom("rate_plans").select(columns).where("id", "=", id).forUpdate().executeTakeFirst();
}

export function insertRatePlan(db: Transaction<DB>, input: z.output<typeof createRatePlanBody>) {
  // A derived plan's own nightly price is not used: 0 when none is given.
  return db.insertInto("rate_plans").values({ ...snakeKeys(input), nightly_price: input.nightlyPrice ?? 0 })
    .returning(columns).executeTakeFirstOrThrow();
}

export function updateRatePlan(db: Transaction<DB>, id: string, input: z.output<typeof updateRatePlanBody>) {
  return db.updateTable("rate_plans").set(snakeKeys(input)).where("id", "=", id).returning(columns)
    .executeTakeFirst();
}

export function deleteRatePlan(db: Transaction<DB>, id: string) {
  return db.deleteFrom("rate_plans").where("id", "=", id).executeTakeFirst();
}
