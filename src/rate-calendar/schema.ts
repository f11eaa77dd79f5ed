import { z } from "zod";
import { answeredDate, currency, daysBetween, domainRule, id, isoDate, minorUnits } from "../http/schemas.ts";
import { MAX_NIGHTLY_PRICE } from "../money/limits.ts";

export const weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

// A range of days, both ends included, of at most a year and a day.
export const MAX_CALENDAR_DAYS = 366;
const range = {
  from: isoDate.meta({ description: "The first day, on the property's clock." }),
  to: isoDate.meta({ description: "The last day, included; at most 365 days after from." }),
};
const inOrder = (body: { from: string; to: string }) => body.to >= body.from && daysBetween(body.from, body.to) < MAX_CALENDAR_DAYS;
const rangeRule = { message: `to must be from or a later day, at most ${MAX_CALENDAR_DAYS} days in all.`, path: ["to"], params: domainRule };

export const rateCalendarQuery = z.strictObject(range).refine(inOrder, rangeRule);

const price = minorUnits.min(0).max(MAX_NIGHTLY_PRICE);
const stayNights = z.number().int().min(1).max(365);

export const rateCalendarDay = z.object({
  date: answeredDate,
  price: price.meta({ description: "The night's price for the room type's standard occupancy." }),
  extraAdultPrice: price,
  extraChildPrice: price,
  minStay: z.number().int().meta({ description: "The fewest nights of a stay arriving this day." }),
  maxStay: z.number().int().nullable().meta({ description: "The most nights of a stay arriving this day; null for no limit." }),
  closedToArrival: z.boolean(),
  closedToDeparture: z.boolean(),
  closed: z.boolean().meta({ description: "Stop-sell: no stay on this plan includes this night." }),
}).meta({ id: "RateCalendarDay" });

export const rateCalendar = z.object({
  ratePlanId: id,
  currency,
  days: z.array(rateCalendarDay),
}).meta({ id: "RateCalendar", description: "A plan's calendar as it applies: its own days where set, its defaults otherwise." });

// Each value given is set on every chosen day; null takes the day back to the plan's
// default; a value left out keeps what the day has.
const values = {
  price: price.nullable(),
  extraAdultPrice: price.nullable(),
  extraChildPrice: price.nullable(),
  minStay: stayNights.nullable(),
  maxStay: stayNights.nullable(),
  closedToArrival: z.boolean().nullable(),
  closedToDeparture: z.boolean().nullable(),
  closed: z.boolean().nullable(),
};
export type CalendarField = keyof typeof values;
export const calendarFields = Object.keys(values) as CalendarField[];

export const rateCalendarChange = z.strictObject({
  ratePlanId: id,
  ...range,
  weekdays: z.array(z.enum(weekdays)).min(1).max(7).optional()
    .meta({ description: "Only these days of the week within the range; all of them when left out." }),
  ...Object.fromEntries(calendarFields.map((field) => [field, values[field].optional()])) as {
    [F in CalendarField]: z.ZodOptional<(typeof values)[F]>;
  },
}).refine(inOrder, rangeRule)
  .refine((change) => calendarFields.some((field) => change[field] !== undefined), {
    message: "Give at least one value to set.", path: ["price"], params: domainRule,
  });

export const setRateCalendarBody = z.strictObject({
  changes: z.array(rateCalendarChange).min(1).max(100)
    .meta({ description: "Applied in order, in one transaction: all of them or none." }),
}).meta({ id: "RateCalendarChanges" });

export const rateCalendarWritten = z.object({
  days: z.number().int().meta({ description: "Plan days written, counted once per change." }),
}).meta({ id: "RateCalendarWritten" });
