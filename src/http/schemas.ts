import { z } from "zod";

// Shapes many resources share, named once so the OpenAPI document names them once.
export const id = z.uuid();
export const idParams = z.strictObject({ id });
// Dates and times. A request's (timestampInput, isoDate) are narrower than RFC 3339, and
// each pattern is exactly what the server takes, so the OpenAPI document says it:
// - years 1900 to 2999: Postgres has no year 0, and a year near 9999 leaves four digits
//   once it is turned to UTC;
// - a UTC offset of Z or -15:59 to +15:59: Postgres refuses 16 hours and more (real zones
//   lie within -12:00 and +14:00);
// - at most nine digits of fractional seconds: Postgres keeps six and refuses a long tail;
// - a real calendar day, February 29 in leap years only, as zod's own pattern checks it.
// An instant the API answers (timestamp) is in UTC, so one given near the ends of the range
// with an offset may fall on the other side of a year's end, in 1899 or 3000.
const acceptedYears = "(?:19\\d\\d|2\\d\\d\\d)";
const answeredYears = "(?:1899|19\\d\\d|2\\d\\d\\d|3000)";
// The leap years of 1899 to 3000: every fourth, but not 1900, 2100, 2200, 2300, 2500, ...
const leapYears = "(?:(?:19|2\\d)(?:0[48]|[2468][048]|[13579][26])|2[048]00)";
const dayOf = (years: string) =>
  `(?:${leapYears}-02-29|${years}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8])))`;
const timeOfDay = "(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?";
export const timestampInput = z.stringFormat(
  "date-time",
  new RegExp(`^${dayOf(acceptedYears)}T${timeOfDay}(?:Z|[+-](?:0\\d|1[0-5]):[0-5]\\d)$`),
  { error: "An RFC 3339 date-time from 1900 to 2999, with Z or an offset up to 15:59, like 2027-03-01T15:00:00+01:00." },
);
export const timestamp = z.stringFormat("date-time", new RegExp(`^${dayOf(answeredYears)}T${timeOfDay}(?:Z|\\+00:00)$`));
export const isoDate = z.stringFormat("date", new RegExp(`^${dayOf(acceptedYears)}$`), {
  error: "A date YYYY-MM-DD from 1900 to 2999, like 2027-03-01.",
});
export const currency = z.string().regex(/^[A-Z]{3}$/, "An ISO 4217 code in capitals, like EUR.");
// Amounts are bigint minor units in Postgres, and clients read them as numbers, exact only up
// to 2^53 - 1. A single amount (a total, a payment, a payment link) is at most MAX_AMOUNT,
// 10^12 (ten billion in a currency of cents); a nightly price at most MAX_NIGHTLY_PRICE, so
// 365 nights of it stay within 10^12; and the payments of one reservation add up to at most
// MAX_AMOUNT, so its balance lies within -10^12 and 10^12. The database holds the same
// (supabase/migrations/20261124000100_amount_maxima.sql).
export const MAX_AMOUNT = 1_000_000_000_000;
export const minorUnits = z.number().int().min(-MAX_AMOUNT).max(MAX_AMOUNT)
  .meta({ description: "An amount in the currency's minor units (cents)." });
export const countryCode = z.string().regex(/^[A-Z]{2}$/, "An ISO 3166-1 alpha-2 code in capitals, like PT.");
export const email = z.email().max(320);
export const phone = z.string().regex(/^\+[1-9][0-9]{6,14}$/, "An E.164 number, like +351912345678.");
export const clockTime = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$/, "A time of day, HH:MM.");

// The most a rate plan charges for a night, in minor units: 365 nights of it stay within MAX_AMOUNT.
export const MAX_NIGHTLY_PRICE = 1_000_000_000;

export const problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  currentStatus: z.string().optional().meta({
    description: "With `urn:pms:problem:lifecycle-transition-refused`: the status the resource (or, for a new door code " +
      "or payment, the reservation or payment link it needs) is in now.",
  }),
  requestedStatus: z.string().optional().meta({
    description: "With `urn:pms:problem:lifecycle-transition-refused`, for a status change: the status asked for.",
  }),
  allowedStatuses: z.array(z.string()).optional().meta({
    description: "With `urn:pms:problem:lifecycle-transition-refused`, for a status change: the statuses the resource " +
      "may move to from `currentStatus` (none when it is final).",
  }),
  referencedBy: z.string().optional().meta({
    description: "With `urn:pms:problem:still-referenced`: what still refers to the resource, like `reservations`.",
  }),
  reasons: z.array(z.string()).optional().meta({
    description: "Only with `urn:pms:problem:weak-password`: why the password was refused, as Supabase Auth says: " +
      "`length` (too short), `characters` (a required kind of character is missing), `pwned` (known from a breach).",
  }),
}).meta({ id: "Problem", description: "An RFC 9457 problem document; `type` names the kind of problem." });

export const pagination = z.object({
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
}).meta({ id: "Pagination" });

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination });
}

// A PATCH body: every field optional, unknown fields refused, and at least one given.
export function patchOf<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape).partial().refine((body) => Object.keys(body).length > 0, {
    message: "Give at least one field to change.",
    // A body of unknown fields is wrong for that reason alone.
    when: (payload) => payload.issues.length === 0,
  });
}

// A comma-separated filter value, like status=pending,confirmed.
export function oneOrMany<T extends readonly [string, ...string[]]>(values: T) {
  return z.string().transform((raw) => raw.split(",").map((value) => value.trim())).pipe(
    z.array(z.enum(values)).min(1),
  ).meta({ description: `One or more of ${values.join(", ")}, comma-separated.` });
}
