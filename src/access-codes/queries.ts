import type { Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createAccessCodeBody } from "./schema.ts";

const columns = camelSelection([
  "id", "reservation_id", "property_id", "code", "valid_from", "valid_until", "status", "revoked_at", "created_at",
  "updated_at",
]);

export function listAccessCodes(db: Reads, reservationId: string, page: Page) {
  const query = db.selectFrom("access_codes").select(columns).where("reservation_id", "=", reservationId)
    .orderBy("created_at").orderBy("id");
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findAccessCode(db: Reads, reservationId: string, id: string) {
  return db.selectFrom("access_codes").select(columns).where("reservation_id", "=", reservationId).where("id", "=", id)
    .executeTakeFirst();
}

// Left null, the property, the window and the code come from the access code trigger
// (the reservation's property, its check-in and check-out times in the property's zone).
// Inserted from the reservation's row, so a reservation this request cannot see inserts
// nothing and answers undefined, without a read of its own first.
export function insertAccessCode(db: Transaction<DB>, reservationId: string, input: z.output<typeof createAccessCodeBody>) {
  const values = {
    property_id: null,
    valid_from: input.validFrom ?? null,
    valid_until: input.validUntil ?? null,
    ...(input.code ? { code: input.code } : {}),
  };
  const names = Object.keys(values) as (keyof typeof values)[];
  return db.insertInto("access_codes")
    .columns(["reservation_id", ...names])
    .expression(
      db.selectFrom("reservations").where("id", "=", reservationId)
        .select((eb) => [eb.ref("id").as("reservation_id"), ...names.map((name) => eb.val(values[name]).as(name))]),
    )
    .returning(columns).executeTakeFirst();
}

export function revokeAccessCode(db: Transaction<DB>, reservationId: string, id: string) {
  return db.updateTable("access_codes").set({ status: "revoked" })
    .where("reservation_id", "=", reservationId).where("id", "=", id).returning(columns).executeTakeFirst();
}
