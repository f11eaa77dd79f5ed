import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { camelSelection, snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import { type Page, paginate } from "../db/pagination.ts";
import type { Reads } from "../db/reads.ts";
import type {
  createPaymentLinkBody,
  listPaymentLinksQuery,
  listPaymentsQuery,
  paymentSources,
  recordPaymentBody,
} from "./schema.ts";

const paymentColumns = camelSelection([
  "id", "reservation_id", "payment_link_id", "amount", "currency", "method", "source", "external_reference",
  "received_at", "notes", "created_at", "updated_at",
]);

// The token is the link's secret; it travels only inside the url.
const linkColumns = camelSelection([
  "id", "reservation_id", "amount", "currency", "url", "description", "status", "expires_at", "paid_at",
  "cancelled_at", "created_at", "updated_at",
]);

export function listPayments(db: Reads, filter: z.output<typeof listPaymentsQuery>, page: Page) {
  let query = db.selectFrom("payments").select(paymentColumns).orderBy("received_at", "desc").orderBy("id");
  if (filter.reservationId) query = query.where("reservation_id", "=", filter.reservationId);
  if (filter.source) query = query.where("source", "in", filter.source);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findPayment(db: Reads, id: string) {
  return db.selectFrom("payments").select(paymentColumns).where("id", "=", id).executeTakeFirst();
}

// Inserted from the reservation's row, so a reservation this request cannot see inserts
// nothing and answers undefined, without a read of its own first. `strict` is the
// integrations' form: a currency other than the reservation's, or an external reference
// already recorded, also inserts nothing, for the caller to tell which.
export function insertPayment(
  db: Transaction<DB>,
  reservationId: string,
  input: z.output<typeof recordPaymentBody>,
  source: (typeof paymentSources)[number],
  options: { strict?: boolean } = {},
) {
  const { currency, ...rest } = input;
  // A null currency is filled from the reservation by the payment trigger; any other must match it.
  const values = { ...snakeKeys(rest), source, currency: currency ?? null };
  const names = Object.keys(values) as (keyof typeof values)[];
  let reservation = db.selectFrom("reservations").where("id", "=", reservationId);
  if (options.strict && currency) reservation = reservation.where("currency", "=", currency);
  const insert = db.insertInto("payments")
    .columns(["reservation_id", ...names])
    .expression(
      reservation.select((eb) => [eb.ref("id").as("reservation_id"), ...names.map((name) => eb.val(values[name]).as(name))]),
    );
  return (options.strict ? insert.onConflict((conflict) => conflict.columns(["tenant_id", "external_reference"]).doNothing()) : insert)
    .returning(paymentColumns).executeTakeFirst();
}

export function findPaymentByReference(db: Reads, externalReference: string) {
  return db.selectFrom("payments").select(paymentColumns).where("external_reference", "=", externalReference)
    .executeTakeFirst();
}

export function listPaymentLinks(db: Reads, filter: z.output<typeof listPaymentLinksQuery>, page: Page) {
  let query = db.selectFrom("payment_links").select(linkColumns).orderBy("created_at", "desc").orderBy("id");
  if (filter.reservationId) query = query.where("reservation_id", "=", filter.reservationId);
  if (filter.status) query = query.where("status", "in", filter.status);
  return paginate(query, page, { tenant: ["tenant_id"] });
}

export function findPaymentLink(db: Reads, id: string) {
  return db.selectFrom("payment_links").select(linkColumns).where("id", "=", id).executeTakeFirst();
}

export function insertPaymentLink(
  db: Transaction<DB>,
  reservationId: string,
  amount: number,
  input: z.output<typeof createPaymentLinkBody>,
) {
  return db.insertInto("payment_links")
    .values({
      reservation_id: reservationId,
      amount,
      // Filled from the reservation by the payment link trigger, as the url is from the tenant.
      currency: sql<string>`null`,
      ...snakeKeys({ description: input.description, expiresAt: input.expiresAt }),
    })
    .returning(linkColumns).executeTakeFirstOrThrow();
}

export function cancelPaymentLink(db: Transaction<DB>, id: string) {
  return db.updateTable("payment_links").set({ status: "cancelled" }).where("id", "=", id).returning(linkColumns)
    .executeTakeFirst();
}
