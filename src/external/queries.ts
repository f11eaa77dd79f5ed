import { sql, type Transaction } from "kysely";
import type { z } from "zod";
import { snakeKeys } from "../db/columns.ts";
import type { DB } from "../db/database.ts";
import type { Reads } from "../db/reads.ts";
import { reservationColumns } from "../reservations/queries.ts";
import type { HeldAri } from "./ari.ts";
import type { channelBookingBody, channelBookingChange, channelGuest } from "./schema.ts";

type Booking = z.output<typeof channelBookingBody>;
type Reference = Pick<Booking, "source" | "channel" | "externalReference">;

// Whether the property is one of the key's; if it is, until the transaction ends this
// reference is the request's, and a retry racing it waits (supabase/schemas/external.sql,
// private.lock_channel_booking). The lookup of the reference is a statement of its own,
// after the wait, so that it sees what the request before it committed.
export async function lockChannelBooking(db: Transaction<DB>, propertyId: string, booking: Reference): Promise<boolean> {
  const { rows } = await sql`
    select private.lock_channel_booking(${booking.source}, ${booking.channel}, ${booking.externalReference})
    from properties where id = ${propertyId}`.execute(db);
  return rows.length > 0;
}

// The stay a channel booked under this reference, on one of the key's properties.
export function findChannelBooking(db: Transaction<DB>, booking: Reference) {
  return db.selectFrom("reservations").select(reservationColumns)
    .where("source", "=", booking.source).where("channel", "=", booking.channel)
    .where("external_reference", "=", booking.externalReference)
    .executeTakeFirst();
}

// The guest's id, found in the tenant or created (private.channel_guest), as an expression.
function channelGuestExpression(guest: z.output<typeof channelGuest>) {
  return sql<string>`private.channel_guest(${guest.firstName}, ${guest.lastName}, ${guest.email ?? null},
    ${guest.phone ?? null}, ${guest.countryCode ?? null}, ${guest.locale ?? null})`;
}

export async function channelGuestId(db: Transaction<DB>, guest: z.output<typeof channelGuest>): Promise<string> {
  const { rows: [row] } = await sql<{ id: string }>`select ${channelGuestExpression(guest)} as id`.execute(db);
  return row!.id;
}

// The guest found or added and the stay booked, in one statement. Without a total, the
// reservation trigger prices the stay from the plan's calendar; the currency is the
// plan's unless one is sent (and then must be it).
export function insertChannelBooking(db: Transaction<DB>, propertyId: string, booking: Booking) {
  return db.insertInto("reservations").values({
    property_id: propertyId,
    room_type_id: booking.roomTypeId,
    rate_plan_id: booking.ratePlanId,
    guest_id: channelGuestExpression(booking.guest),
    check_in: booking.checkIn,
    check_out: booking.checkOut,
    adults: booking.adults,
    children: booking.children,
    total_amount: booking.totalAmount ?? sql<number>`null`,
    currency: booking.currency ?? sql<string>`null`,
    status: booking.status,
    source: booking.source,
    channel: booking.channel,
    external_reference: booking.externalReference,
    notes: booking.notes ?? null,
  }).returning(reservationColumns).executeTakeFirstOrThrow();
}

type Change = Omit<z.output<typeof channelBookingChange>, "guest"> & { guestId?: string };

// Under the policy that lets an integration change only its channels' stays: nothing
// comes back for any other.
export function updateChannelBooking(db: Transaction<DB>, id: string, change: Change) {
  const { totalAmount, ...rest } = change;
  // Null hands the price back to the calendar (the reservation trigger).
  const total = totalAmount === undefined ? {} : { total_amount: totalAmount ?? sql<number>`null` };
  return db.updateTable("reservations").set({ ...snakeKeys(rest), ...total }).where("id", "=", id)
    .returning(reservationColumns).executeTakeFirst();
}

export function cancelChannelBooking(db: Transaction<DB>, id: string, reason: string | undefined) {
  return db.updateTable("reservations").set({ status: "cancelled", ...(reason ? { cancellation_reason: reason } : {}) })
    .where("id", "=", id).where("status", "<>", "cancelled").returning(reservationColumns).executeTakeFirst();
}

// A property's availability, rates and restrictions, the holds not yet counted
// (private.channel_ari, src/external/ari.ts); undefined for a property the key does not act for.
export async function readChannelAri(db: Reads, propertyId: string, from: string, to: string): Promise<HeldAri | undefined> {
  const { rows: [row] } = await sql<{ ari: string | null }>`
    select private.channel_ari(${propertyId}, ${from}::date, ${to}::date)::text as ari`.execute(db);
  return row?.ari ? JSON.parse(row.ari) as HeldAri : undefined;
}

// Where a reader stands in the log of changes (supabase/schemas/channel-sync.sql): after
// this transaction's change `id`, read at `at` (epoch seconds), for its expiry.
export type ChangeCursor = { transaction: string; id: string; at: number };

export function encodeCursor(cursor: ChangeCursor): string {
  return btoa(`${cursor.transaction}.${cursor.id}.${cursor.at}`).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

// Undefined for anything no page gave.
export function decodeCursor(text: string): ChangeCursor | undefined {
  let plain: string;
  try {
    plain = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
  const match = /^([0-9]{1,20})\.([0-9]{1,19})\.([0-9]{1,12})$/.exec(plain);
  return match ? { transaction: match[1]!, id: match[2]!, at: Number(match[3]) } : undefined;
}

type ChangeRow = {
  transaction: string;
  id: string;
  kind: "availability" | "rates" | "reservation";
  propertyId: string;
  subjectId: string;
  from: string | null;
  to: string | null;
  changedAt: string;
  settledBefore: string;
  now: number;
};

// The changes after `since` that every reader will ever see there: those of transactions
// older than any still running, in their order, under the policy that keeps a key to its
// properties and its scopes' kinds. One more than `limit` says whether more follow.
export async function readChanges(
  db: Reads,
  since: ChangeCursor | undefined,
  propertyId: string | undefined,
  limit: number,
) {
  const after = since ?? { transaction: "0", id: "0", at: 0 };
  const { rows } = await sql<ChangeRow>`
    with horizon as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
    select c.transaction_id::text as transaction, c.id::text as id, c.kind, c.property_id as "propertyId",
           c.subject_id as "subjectId", c.first_day as from, c.last_day as to, c.changed_at as "changedAt",
           h.xmin::text as "settledBefore", extract(epoch from now())::bigint as now
    from horizon h
    left join ari_changes c
      on (c.transaction_id, c.id) > (${after.transaction}::xid8, ${after.id}::bigint) and c.transaction_id < h.xmin
         ${propertyId ? sql`and c.property_id = ${propertyId}::uuid` : sql``}
    order by c.transaction_id, c.id
    limit ${limit + 1}`.execute(db);
  const first = rows[0]!;
  // The horizon's row alone, with no change, when nothing follows `since`.
  const found = rows.filter((row) => row.id !== null);
  const changes = found.slice(0, limit);
  const last = changes.at(-1);
  const next: ChangeCursor = last
    ? { transaction: last.transaction, id: last.id, at: Math.floor(Date.parse(last.changedAt) / 1000) }
    // Nothing after `since` yet: every change before the horizon is already settled.
    : since ?? { transaction: first.settledBefore, id: "0", at: Number(first.now) };
  return {
    data: changes.map((row) => ({
      kind: row.kind,
      propertyId: row.propertyId,
      roomTypeId: row.kind === "availability" ? row.subjectId : null,
      ratePlanId: row.kind === "rates" ? row.subjectId : null,
      reservationId: row.kind === "reservation" ? row.subjectId : null,
      from: row.from,
      to: row.to,
      changedAt: row.changedAt,
    })),
    nextCursor: encodeCursor(next),
    hasMore: found.length > limit,
  };
}
