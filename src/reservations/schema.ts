import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { answeredDate, currency, domainRule, id, isoDate, minorUnits, oneOrMany, patchOf, text, timestamp, timestampInput } from "../http/schemas.ts";

export const reservationStatuses = ["pending", "confirmed", "checked_in", "checked_out", "cancelled", "no_show"] as const;
export const reservationSources = ["direct", "phone", "email", "walk_in", "website", "channel_manager", "ota", "other"] as const;

const stay = {
  roomTypeId: id.meta({
    description: "What was booked. Defaults to the unit's room type; a unit assigned must be of it. Changing it moves the stay's " +
      "claim on inventory to the new type.",
  }),
  unitId: id.nullable().meta({ description: "The unit, of the stay's room type; needed by check-in." }),
  guestId: id,
  ratePlanId: id.nullable(),
  checkIn: isoDate,
  checkOut: isoDate,
  adults: z.number().int().min(1).max(50),
  children: z.number().int().min(0).max(50),
  totalAmount: minorUnits.min(0).nullable().meta({
    description: "The stay's price in minor units, kept as given (priceOverridden). Null or left out: priced from the rate " +
      "plan's calendar night by night, and priced again when the plan, room type, dates or party change.",
  }),
  externalReference: z.string().min(1).max(200).nullable(),
  notes: z.string().max(4000).nullable(),
};

export const nightsInOrder = (body: { checkIn?: string; checkOut?: string }) =>
  body.checkIn === undefined || body.checkOut === undefined || body.checkOut > body.checkIn;
export const checkOutAfterCheckIn = { message: "checkOut must be after checkIn.", path: ["checkOut"], params: domainRule };

export const createReservationBody = z.strictObject({
  ...stay,
  propertyId: id,
  roomTypeId: stay.roomTypeId.optional(),
  unitId: stay.unitId.optional(),
  ratePlanId: stay.ratePlanId.optional(),
  adults: stay.adults.default(1),
  children: stay.children.default(0),
  totalAmount: stay.totalAmount.optional(),
  currency: currency.optional().meta({ description: "Defaults to the rate plan's currency, else the property's." }),
  status: z.enum(["pending", "confirmed"]).default("pending"),
  source: z.enum(reservationSources).default("direct"),
  externalReference: stay.externalReference.optional(),
  notes: stay.notes.optional(),
}).refine(nightsInOrder, checkOutAfterCheckIn).meta({ id: "ReservationCreate" });

// Moving the stay (dates, unit) is an update; its status moves only through the actions.
export const updateReservationBody = patchOf(stay).refine(nightsInOrder, checkOutAfterCheckIn)
  .meta({ id: "ReservationUpdate" });

export const cancelReservationBody = z.strictObject({
  reason: text(1000).optional(),
}).meta({ id: "ReservationCancel" });

export const reservation = z.object({
  id,
  propertyId: id,
  roomTypeId: id.nullable().meta({ description: "Null only for a stay booked without a unit before room types existed." }),
  unitId: id.nullable(),
  guestId: id,
  ratePlanId: id.nullable(),
  confirmationCode: z.string(),
  checkIn: answeredDate,
  checkOut: answeredDate,
  adults: z.number().int(),
  children: z.number().int(),
  status: z.enum(reservationStatuses),
  totalAmount: minorUnits.min(0),
  priceOverridden: z.boolean().meta({
    description: "Whether totalAmount was given by a writer and is kept as given, rather than priced from the calendar.",
  }),
  currency,
  amountPaid: minorUnits.min(0),
  balance: minorUnits,
  source: z.enum(reservationSources),
  channel: z.string().nullable().meta({
    description: "The channel a booking came through, as its channel manager names it; null for the property's own bookings.",
  }),
  externalReference: z.string().nullable(),
  notes: z.string().nullable(),
  cancellationReason: z.string().nullable(),
  confirmedAt: timestamp.nullable(),
  checkedInAt: timestamp.nullable(),
  checkedOutAt: timestamp.nullable(),
  cancelledAt: timestamp.nullable(),
  noShowAt: timestamp.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ id: "Reservation" });

export const listReservationsQuery = z.strictObject({
  ...pageQuery,
  status: oneOrMany(reservationStatuses).optional(),
  propertyId: id.optional(),
  roomTypeId: id.optional(),
  unitId: id.optional(),
  guestId: id.optional(),
  externalReference: z.string().min(1).max(200).optional().meta({ description: "The booking with this reference from its source." }),
  from: isoDate.optional().meta({ description: "Stays that include a night on or after this date." }),
  to: isoDate.optional().meta({ description: "Stays that begin before this date." }),
  updatedSince: timestampInput.optional().meta({
    description: "Reservations changed at or after this instant, oldest change first (instead of by check-in).",
  }),
});
