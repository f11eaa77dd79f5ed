import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import { compileOnce } from "../db/compile-once.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type { createReservationBody, listReservationsQuery, reservationStatuses, updateReservationBody } from "./schema.ts";

export type ReservationStatus = (typeof reservationStatuses)[number];

// What every read and write of a reservation answers with.
export const reservationColumns = camelSelection([
  "id", "property_id", "room_type_id", "unit_id", "guest_id", "rate_plan_id", "confirmation_code", "check_in", "check_out", "adults",
  "children", "status", "total_amount", "price_overridden", "currency", "amount_paid", "balance", "source", "channel",
  "external_reference", "notes",
  "cancellation_reason", "confirmed_at", "checked_in_at", "checked_out_at", "cancelled_at", "no_show_at", "created_at",
  "updated_at",
]);

// The session API's filters, and the integrations' (which RLS already keeps to one property).
export type ReservationFilter = Partial<z.output<typeof listReservationsQuery>>;

export function listReservations(db: Reads, filter: ReservationFilter, page: Page) {
  let query = db.selectFrom("reservations").select(reservationColumns);
  // A sync reads what changed since its last run in the order it changed.
  query = filter.updatedSince
    ? query.where("updated_at", ">=", filter.updatedSince).orderBy("updated_at").orderBy("id")
    : query.orderBy("check_in").orderBy("id");
  if (filter.status) query = query.where("status", "in", filter.status);
  if (filter.propertyId) query = query.where("property_id", "=", filter.propertyId);
  if (filter.roomTypeId) query = query.where("room_type_id", "=", filter.roomTypeId);
  if (filter.unitId) query = query.where("unit_id", "=", filter.unitId);
  if (filter.guestId) query = query.where("guest_id", "=", filter.guestId);
  if (filter.externalReference) query = query.where("external_reference", "=", filter.externalReference);
  if (filter.from) {
    // A stay that meets `from` checked in at most the longest stay's nights before it: a
    // lower bound on check-in, so that the list reads one range of the check-in index
    // rather than the tenant's whole history before `from`. The longest stay is read under
    // the same RLS, one step down an index of stay lengths
    // (supabase/migrations/20261130000100_stay_dates_by_check_in.sql).
    query = query.where("check_out", ">", filter.from).where("check_in", ">=", sql<string>`${filter.from}::date -
      (select max(longest.check_out - longest.check_in) from reservations as longest)`);
  }
  if (filter.to) query = query.where("check_in", "<", filter.to);
  return paginate(query, page, { tenant: ["tenant_id"], property: "property_id" }, statusTally(db, filter));
}

// The exact total of a list filtered by status, property, both or neither, from the
// tallies the reservation triggers keep per tenant, property and status, under the same
// policies as the reservations (supabase/migrations/20261130000800_reservation_status_tallies.sql):
// a sum of a few rows in place of a count of every match. A list with any other filter
// (one added later included) is counted.
const tallied = new Set(["status", "propertyId", "limit", "offset"]);

function statusTally(db: Reads, filter: ReservationFilter) {
  if (Object.entries(filter).some(([key, value]) => value !== undefined && !tallied.has(key))) return undefined;
  let tally = db.selectFrom("reservation_status_tallies")
    .select(sql<number>`coalesce(sum(reservations), 0)::integer`.as("reservations"));
  if (filter.status) tally = tally.where("status", "in", filter.status);
  if (filter.propertyId) tally = tally.where("property_id", "=", filter.propertyId);
  return sql<number>`${tally}`;
}

// The API's most frequent read, and the same under lock for a conditional update.
const reservationById = compileOnce((db, id: string) =>
  db.selectFrom("reservations").select(reservationColumns).where("id", "=", id).compile()
);
const reservationByIdForUpdate = compileOnce((db, id: string) =>
  db.selectFrom("reservations").select(reservationColumns).where("id", "=", id).forUpdate().compile()
);

export async function findReservation(db: Reads, id: string) {
  const { rows: [row] } = await db.executeQuery(reservationById(id));
  return row;
}

// Held until the write's transaction ends.
export async function lockReservation(db: Transaction<DB>, id: string) {
  const { rows: [row] } = await db.executeQuery(reservationByIdForUpdate(id));
  return row;
}

export function insertReservation(db: Transaction<DB>, input: z.output<typeof createReservationBody>) {
  const { totalAmount, currency, ...rest } = input;
  // Left null, the reservation trigger prices the stay from its rate plan's calendar and
  // fills the currency from the rate plan or the property.
  return db.insertInto("reservations")
    .values({ ...snakeKeys(rest), total_amount: totalAmount ?? sql<number>`null`, currency: currency ?? sql<string>`null` })
    .returning(reservationColumns).executeTakeFirstOrThrow();
}

export function updateReservation(db: Transaction<DB>, id: string, input: z.output<typeof updateReservationBody>) {
  const { totalAmount, ...rest } = input;
  // A total set to null hands the price back to the calendar (the reservation trigger).
  const total = totalAmount === undefined ? {} : { total_amount: totalAmount ?? sql<number>`null` };
  return db.updateTable("reservations").set({ ...snakeKeys(rest), ...total }).where("id", "=", id).returning(reservationColumns)
    .executeTakeFirst();
}

// The lifecycle lives in the reservation trigger; a refused step comes back as PT409.
// A step to the status the reservation already has changes nothing and returns nothing.
export function moveReservation(
  db: Transaction<DB>,
  id: string,
  status: ReservationStatus,
  extra: { cancellation_reason?: string } = {},
) {
  return db.updateTable("reservations").set({ status, ...extra }).where("id", "=", id)
    .where("status", "<>", status).returning(reservationColumns).executeTakeFirst();
}

export function deleteReservation(db: Transaction<DB>, id: string) {
  return db.deleteFrom("reservations").where("id", "=", id).executeTakeFirst();
}
