import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { createAccessCodeBody } from "./schema.ts";

const columns = camelSelection([
  "id", "reservation_id", "property_id", "code", "valid_from", "valid_until", "status", "revoked_at", "created_at",
  "updated_at",
]);

export function listAccessCodes(db: Transaction<DB>, reservationId: string, page: Page) {
  const query = db.selectFrom("access_codes").select(columns).where("reservation_id", "=", reservationId)
    .orderBy("created_at").orderBy("id");
  return paginate(query, page);
}

export function findAccessCode(db: Transaction<DB>, reservationId: string, id: string) {
  return db.selectFrom("access_codes").select(columns).where("reservation_id", "=", reservationId).where("id", "=", id)
    .executeTakeFirst();
}

// Left null, the property, the window and the code come from the access code trigger
// (the reservation's property, its check-in and check-out times in the property's zone).
export function insertAccessCode(db: Transaction<DB>, reservationId: string, input: z.output<typeof createAccessCodeBody>) {
  const filledByTrigger = sql<string>`null`;
  return db.insertInto("access_codes")
    .values({
      reservation_id: reservationId,
      property_id: filledByTrigger,
      valid_from: input.validFrom ?? filledByTrigger,
      valid_until: input.validUntil ?? filledByTrigger,
      ...(input.code ? { code: input.code } : {}),
    })
    .returning(columns).executeTakeFirstOrThrow();
}

export function revokeAccessCode(db: Transaction<DB>, reservationId: string, id: string) {
  return db.updateTable("access_codes").set({ status: "revoked" })
    .where("reservation_id", "=", reservationId).where("id", "=", id).returning(columns).executeTakeFirst();
}
