import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import {
  answeredDate,
  countryCode,
  currency,
  daysBetween,
  domainRule,
  email,
  id,
  isoDate,
  minorUnits,
  oneOrMany,
  patchOf,
  phone,
  text,
  timestamp,
  timestampInput,
} from "../http/schemas.ts";
import { MAX_CALENDAR_DAYS, rateCalendarDay } from "../rate-calendar/schema.ts";
import { paymentMethods } from "../payments/schema.ts";
import { checkOutAfterCheckIn, nightsInOrder, reservationStatuses } from "../reservations/schema.ts";

export const externalPaymentBody = z.strictObject({
  amount: minorUnits.min(1),
  currency: currency.meta({ description: "The reservation's currency; any other is a 422." }),
  method: z.enum(paymentMethods),
  externalReference: z.string().min(1).max(200).meta({
    description: "Your system's id for the payment, unique in the tenant: sending it again returns the first payment.",
  }),
  receivedAt: timestampInput.optional().meta({ description: "Defaults to now." }),
}).meta({ id: "ExternalPaymentCreate" });

export const listExternalReservationsQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional().meta({ description: "One of the key's properties; all of them without it." }),
  externalReference: z.string().min(1).max(200).optional().meta({
    description: "The booking with this reference from its channel (each source and channel numbers its own).",
  }),
  status: oneOrMany(reservationStatuses).optional(),
  from: isoDate.optional().meta({ description: "Stays that include a night on or after this date." }),
  to: isoDate.optional().meta({ description: "Stays that begin before this date." }),
  updatedSince: timestampInput.optional().meta({
    description: "Reservations changed at or after this instant, oldest change first (instead of by check-in).",
  }),
});

// The guest as a channel sends them: found in the tenant by email (in any case), else by
// name and phone, else created. A guest found keeps their record; the channel only fills
// a phone or country the record lacks.
export const channelGuest = z.strictObject({
  firstName: text(100),
  lastName: text(100),
  email: email.optional(),
  phone: phone.optional(),
  countryCode: countryCode.optional(),
  locale: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "A BCP 47 language tag, like en or pt-BR.").optional()
    .meta({ description: "The language of the guest's emails; en when left out." }),
}).meta({ id: "ChannelGuest" });

const channelStay = {
  roomTypeId: id.meta({ description: "The room type sold; the front desk assigns a unit of it." }),
  ratePlanId: id.meta({ description: "The rate plan sold, of the property, for the room type or for any." }),
  checkIn: isoDate,
  checkOut: isoDate,
  adults: z.number().int().min(1).max(50),
  children: z.number().int().min(0).max(50),
  totalAmount: minorUnits.min(0).meta({
    description: "The channel's price for the stay in minor units, kept as given. Left out: priced from the rate plan's " +
      "calendar night by night.",
  }),
  notes: z.string().max(4000).nullable(),
};

export const channelSources = ["channel_manager", "ota", "website", "other"] as const;

export const channelBookingBody = z.strictObject({
  ...channelStay,
  adults: channelStay.adults.default(1),
  children: channelStay.children.default(0),
  totalAmount: channelStay.totalAmount.optional(),
  currency: currency.optional().meta({ description: "The rate plan's currency; any other is a 422." }),
  notes: channelStay.notes.optional(),
  status: z.enum(["pending", "confirmed"]).default("confirmed"),
  source: z.enum(channelSources).default("channel_manager"),
  channel: text(100).meta({ description: 'The channel the booking came through, as you name it: "Booking.com", "Expedia".' }),
  externalReference: z.string().min(1).max(200).meta({
    description: "The channel's id for the booking, unique per source and channel in the tenant: sending the same booking " +
      "again returns the first reservation and books nothing.",
  }),
  guest: channelGuest,
}).refine(nightsInOrder, checkOutAfterCheckIn).meta({ id: "ChannelBookingCreate" });

export const channelBookingChange = patchOf({
  roomTypeId: channelStay.roomTypeId,
  ratePlanId: channelStay.ratePlanId,
  checkIn: channelStay.checkIn,
  checkOut: channelStay.checkOut,
  adults: channelStay.adults,
  children: channelStay.children,
  totalAmount: channelStay.totalAmount.nullable().meta({
    description: "The channel's price, kept as given; null hands the stay back to the calendar's price. Left out, a price " +
      "from the calendar follows the change, and a channel's own price is kept.",
  }),
  notes: channelStay.notes,
  guest: channelGuest,
}).refine(nightsInOrder, checkOutAfterCheckIn).meta({ id: "ChannelBookingChange" });

export const channelCancellation = z.strictObject({
  reason: text(1000).optional(),
}).meta({ id: "ChannelBookingCancel" });

// A range of days, both ends included, of at most a year and a day, as the rate calendar's.
export const ariQuery = z.strictObject({
  from: isoDate.meta({ description: "The first day, on the property's clock." }),
  to: isoDate.meta({ description: `The last day, included; at most ${MAX_CALENDAR_DAYS} days in all.` }),
}).refine((query) => query.to >= query.from && daysBetween(query.from, query.to) < MAX_CALENDAR_DAYS, {
  message: `to must be from or a later day, at most ${MAX_CALENDAR_DAYS} days in all.`, path: ["to"], params: domainRule,
});

// One value a day from `from` to `to`: entry i is the day i days after `from`.
const nightly = <T extends z.ZodType>(value: T, description: string) =>
  z.array(value).meta({ description: `${description}, one a day from \`from\` to \`to\`.` });
const day = rateCalendarDay.shape;

export const ari = z.object({
  propertyId: id,
  from: answeredDate,
  to: answeredDate,
  roomTypes: z.array(z.object({
    roomTypeId: id,
    code: z.string(),
    name: z.string(),
    units: z.number().int().meta({ description: "Its units in service." }),
    available: nightly(z.number().int().min(0), "Rooms left each night: units in service, less those blocked and the stays held"),
  })).meta({ description: "Each active room type, by code." }),
  ratePlans: z.array(z.object({
    ratePlanId: id,
    code: z.string(),
    name: z.string(),
    roomTypeId: id.nullable().meta({ description: "The room type it sells; null for every type." }),
    currency,
    price: nightly(day.price, "The night's price for the room type's standard occupancy"),
    extraAdultPrice: nightly(day.extraAdultPrice, "The price of each adult past the standard occupancy"),
    extraChildPrice: nightly(day.extraChildPrice, "The price of each child past the standard occupancy"),
    minStay: nightly(day.minStay, "The fewest nights of a stay arriving that day"),
    maxStay: nightly(day.maxStay, "The most nights of a stay arriving that day, null for no limit"),
    closedToArrival: nightly(day.closedToArrival, "Whether no stay may arrive that day"),
    closedToDeparture: nightly(day.closedToDeparture, "Whether no stay may leave that day"),
    closed: nightly(day.closed, "Stop-sell: whether no stay includes that night"),
  })).meta({ description: "Each active rate plan, by code, with its calendar as it applies." }),
}).meta({
  id: "ChannelAri",
  description: "Availability, rates and restrictions: each an array of one value a day, from `from` to `to`, in order.",
});

export const CHANGES_RETENTION_DAYS = 7;

export const changesQuery = z.strictObject({
  since: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, "A cursor a page of changes gave as nextCursor.").optional().meta({
    description: `The nextCursor of the last page read; without it, from the oldest change kept (${CHANGES_RETENTION_DAYS} days).`,
  }),
  propertyId: id.optional().meta({ description: "One of the key's properties; all of them without it." }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const change = z.object({
  kind: z.enum(["availability", "rates", "reservation"]).meta({
    description: "availability: a room type's rooms left (ari:read); rates: a rate plan's prices and restrictions (ari:read); " +
      "reservation: a stay booked, changed or cancelled (reservations:read).",
  }),
  propertyId: id,
  roomTypeId: id.nullable(),
  ratePlanId: id.nullable(),
  reservationId: id.nullable(),
  from: answeredDate.nullable().meta({ description: "The first day it changed; null with to: every day." }),
  to: answeredDate.nullable().meta({ description: "The last day it changed, included." }),
  changedAt: timestamp,
}).meta({ id: "ChannelChange" });

export const changesPage = z.object({
  data: z.array(change),
  nextCursor: z.string().meta({ description: "Where the next read starts: since=nextCursor." }),
  hasMore: z.boolean().meta({ description: "Whether more changes follow now; read again at once while it is true." }),
}).meta({ id: "ChannelChanges" });
