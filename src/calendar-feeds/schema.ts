import { z } from "zod";
import { pageQuery } from "../db/pagination.ts";
import { domainRule, id, oneOrMany, text, timestamp } from "../http/schemas.ts";

export const calendarFeedStatuses = ["active", "revoked"] as const;

export const createCalendarFeedBody = z.strictObject({
  unitId: id.optional().meta({ description: "The unit whose held stays and blocks the feed shows (or roomTypeId)." }),
  roomTypeId: id.optional().meta({ description: "The room type whose nights with no room left the feed shows (or unitId)." }),
  name: text(100).meta({ description: "The calendar's name in a subscriber's list, like \"Room 101 at Harbour House\"." }),
}).refine((body) => (body.unitId === undefined) !== (body.roomTypeId === undefined), {
  message: "Give exactly one of unitId and roomTypeId.", path: ["unitId"], params: domainRule,
}).meta({ id: "CalendarFeedCreate" });

export const updateCalendarFeedBody = z.strictObject({ name: text(100) }).meta({ id: "CalendarFeedUpdate" });

export const calendarFeed = z.object({
  id,
  propertyId: id,
  unitId: id.nullable(),
  roomTypeId: id.nullable(),
  name: z.string(),
  lastFour: z.string().meta({ description: "The token's last four characters, to tell feeds apart." }),
  status: z.enum(calendarFeedStatuses),
  createdBy: id.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  revokedAt: timestamp.nullable(),
}).meta({ id: "CalendarFeed" });

export const issuedCalendarFeed = calendarFeed.extend({
  url: z.string().meta({
    description: "The feed's secret address, for Airbnb, Vrbo, Booking.com or Google Calendar to subscribe to. Shown in " +
      "this response only: only the token's hash is kept.",
  }),
}).meta({ id: "CalendarFeedIssued" });

export const listCalendarFeedsQuery = z.strictObject({
  ...pageQuery,
  propertyId: id.optional(),
  unitId: id.optional(),
  roomTypeId: id.optional(),
  status: oneOrMany(calendarFeedStatuses).optional(),
});

// The token as the address carries it, with the .ics that calendar services expect.
export const feedParams = z.strictObject({
  feed: z.string().regex(/^[A-Za-z0-9_-]{43}\.ics$/, "A feed's token followed by .ics.").meta({
    description: "The feed's token followed by .ics, as its URL gives it.",
  }),
});
