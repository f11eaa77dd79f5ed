import { z } from "zod";
import { ESTIMATED_EXACT_UP_TO } from "../db/pagination.ts";
import { MAX_AMOUNT } from "../money/limits.ts";

// Shapes many resources share, named once so the OpenAPI document names them once.
export const id = z.uuid();
// What a create answers by default: the new resource's id (Location names it too).
export const createdId = z.object({ id }).meta({ id: "Created", description: "The id of the resource just created." });
export const idParams = z.strictObject({ id });
// Dates and times. A request's (timestampInput, isoDate) are narrower than RFC 3339, and
// each pattern is exactly what the server takes, so the OpenAPI document says it:
// - years 1900 to 2999: Postgres has no year 0, and a year near 9999 leaves four digits
//   once it is turned to UTC;
// - a UTC offset of Z or -15:59 to +15:59: Postgres refuses 16 hours and more (real zones
//   lie within -12:00 and +14:00);
// - at most nine digits of fractional seconds: Postgres keeps six and refuses a long tail;
// - a real calendar day, February 29 in leap years only, as zod's own pattern checks it.
// They carry the pattern alone, no `format`: the pattern is the whole rule, and a generator
// that drew from the format (a fuzzer's, years 1 to 9999) would throw nearly nine draws in
// ten away. An instant the API answers (timestamp) is in UTC, with its format, so one given
// near the ends of the range with an offset may fall on the other side of a year's end, in
// 1899 or 3000; a date it answers (answeredDate, below) is one it took.
const acceptedYears = "(?:19\\d\\d|2\\d\\d\\d)";
const answeredYears = "(?:1899|19\\d\\d|2\\d\\d\\d|3000)";
// The leap years of 1899 to 3000: every fourth, but not 1900, 2100, 2200, 2300, 2500, ...
const leapYears = "(?:(?:19|2\\d)(?:0[48]|[2468][048]|[13579][26])|2[048]00)";
const dayOf = (years: string) =>
  `(?:${leapYears}-02-29|${years}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8])))`;
const timeOfDay = "(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?";
const acceptedDay = new RegExp(`^${dayOf(acceptedYears)}$`);
export const timestampInput = z.string()
  .regex(
    new RegExp(`^${dayOf(acceptedYears)}T${timeOfDay}(?:Z|[+-](?:0\\d|1[0-5]):[0-5]\\d)$`),
    "An RFC 3339 date-time from 1900 to 2999, with Z or an offset up to 15:59, like 2027-03-01T15:00:00+01:00.",
  )
  .meta({ description: "An RFC 3339 date-time from 1900 to 2999, with Z or an offset from -15:59 to +15:59." });
export const timestamp = z.stringFormat("date-time", new RegExp(`^${dayOf(answeredYears)}T${timeOfDay}(?:Z|\\+00:00)$`));
export const isoDate = z.string().regex(acceptedDay, "A date YYYY-MM-DD from 1900 to 2999, like 2027-03-01.")
  .meta({ description: "A date, YYYY-MM-DD, from 1900-01-01 to 2999-12-31." });
// The ISO 4217 codes the database accepts (private.is_iso_currency; test/http/currencies.test.ts
// holds the two lists equal), so the document lists exactly the currencies a request may use.
export const isoCurrencies = [
  "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD",
  "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY",
  "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP",
  "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR",
  "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT",
  "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
  "MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK",
  "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
  "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY",
  "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS", "VES", "VND", "VUV", "WST", "XAF", "XCD", "XCG",
  "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
] as const;
export const currency = z.enum(isoCurrencies, { error: "An ISO 4217 currency code in capitals, like EUR." }).meta({ description: "An ISO 4217 currency code in capitals, like EUR." });
export const minorUnits = z.number().int().min(-MAX_AMOUNT).max(MAX_AMOUNT)
  .meta({ description: "An amount in the currency's minor units (cents)." });
export const countryCode = z.string().regex(/^[A-Z]{2}$/, "An ISO 3166-1 alpha-2 code in capitals, like PT.");
// The address pattern the server checks, and only it: JSON Schema's `email` format is a
// different rule (RFC 5321 lengths, quoted local parts), so the document states the pattern.
// zod's rule for the local part; a domain of DNS labels (letters and digits at both ends,
// at most 63 characters), as Supabase Auth requires of the addresses it takes.
export const emailPattern =
  /^(?:[A-Za-z0-9_'+\-]+\.)*[A-Za-z0-9_'+\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
export const email = z.string().max(320).regex(emailPattern, "An email address, like ana@example.com.");
export const phone = z.string().regex(/^\+[1-9][0-9]{6,14}$/, "An E.164 number, like +351912345678.");
// Free text that must say something: up to `max` characters as sent, not all spaces, stored
// without the spaces around it. The pattern is the rule (and, like every field, no U+0000).
export function text(max: number) {
  return z.string().max(max).regex(/^[^\u0000]*[^\s\u0000][^\u0000]*$/, "Must contain a character other than spaces.").trim();
}
export const clockTime = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$/, "A time of day, HH:MM.");

// A date the API answers: one a request gave (isoDate), with its format.
export const answeredDate = z.stringFormat("date", acceptedDay);

// The days from one YYYY-MM-DD date to another, as the calendar counts them.
export function daysBetween(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
}

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
  roomTypeId: z.uuid().optional().meta({ description: "With `urn:pms:problem:no-availability`: the room type that is full." }),
  nights: z.array(z.string()).optional().meta({
    description: "With `urn:pms:problem:no-availability`: the nights (YYYY-MM-DD) on which the room type has no room left.",
  }),
  blockId: z.uuid().optional().meta({
    description: "With `urn:pms:problem:unit-out-of-order`: the block that covers some of the nights (`startsOn`, `endsOn`).",
  }),
  calendarImportId: z.uuid().optional().meta({
    description: "With `urn:pms:problem:held-by-calendar-import`: the import whose feed holds the block.",
  }),
  startsOn: z.string().optional().meta({ description: "With `blockId`: the block's first night." }),
  endsOn: z.string().optional().meta({ description: "With `blockId`: the first night after the block." }),
  unitStatus: z.string().optional().meta({
    description: "With `urn:pms:problem:unit-out-of-order`: the unit's status, when it is not active.",
  }),
  reservationId: z.uuid().optional().meta({
    description: "With `urn:pms:problem:unit-occupied`: the stay the unit holds (`confirmationCode`, `checkIn`, `checkOut`).",
  }),
  confirmationCode: z.string().optional().meta({ description: "With `reservationId`: the stay's confirmation code." }),
  checkIn: z.string().optional().meta({ description: "With `reservationId`: the stay's arrival." }),
  checkOut: z.string().optional().meta({ description: "With `reservationId`: the stay's departure." }),
  ratePlanId: z.uuid().optional().meta({ description: "With `urn:pms:problem:rate-restricted`: the plan that does not sell the stay." }),
  restrictions: z.array(z.object({
    code: z.enum(["closed", "closed_to_arrival", "closed_to_departure", "min_stay", "max_stay"]),
    date: z.string(),
    minStay: z.number().int().optional(),
    maxStay: z.number().int().optional(),
  })).optional().meta({ description: "With `urn:pms:problem:rate-restricted`: each restriction that refuses the stay." }),
  maxOccupancy: z.number().int().optional().meta({
    description: "With `urn:pms:problem:over-occupancy`: the most guests the room type takes (`maxAdults`, `maxChildren`).",
  }),
  maxAdults: z.number().int().optional().meta({ description: "With `maxOccupancy`: the most adults." }),
  maxChildren: z.number().int().optional().meta({ description: "With `maxOccupancy`: the most children." }),
  requiredScope: z.string().optional().meta({
    description: "With `urn:pms:problem:insufficient-scope`: the API key scope the route needs.",
  }),
  reasons: z.array(z.string()).optional().meta({
    description: "Only with `urn:pms:problem:weak-password`: why the password was refused, as Supabase Auth says: " +
      "`length` (too short), `characters` (a required kind of character is missing), `pwned` (known from a breach).",
  }),
}).meta({ id: "Problem", description: "An RFC 9457 problem document; `type` names the kind of problem." });

// What `total` is follows the request's Prefer: count=... (src/db/pagination.ts).
export const pagination = z.object({
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int().min(0).nullable().meta({
    description: "How many items the list holds with these filters, counted as the request's `Prefer: count=` asks " +
      "(`Preference-Applied` names the count that was honoured): every one by default and under `count=exact`; the " +
      "query planner's estimate under `count=planned`; under `count=estimated`, exact up to " +
      `${ESTIMATED_EXACT_UP_TO.toLocaleString("en")} and the planner's estimate (never below ` +
      `${(ESTIMATED_EXACT_UP_TO + 1).toLocaleString("en")}) above; null under \`count=none\`.`,
  }),
  hasMore: z.boolean().meta({
    description: "Whether more items follow this page: exact under every count, whatever `total` is.",
  }),
}).meta({ id: "Pagination" });

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination });
}

// A PATCH body: every field optional, unknown fields refused, and at least one given
// (the document's minProperties).
export function patchOf<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape).partial().refine((body) => Object.keys(body).length > 0, {
    message: "Give at least one field to change.",
    // A body of unknown fields is wrong for that reason alone.
    when: (payload) => payload.issues.length === 0,
  }).meta({ minProperties: 1 });
}

// A rule between fields that JSON Schema cannot state, like checkOut after checkIn. The
// document says it in words; a body that satisfies the schema but breaks it is a 422
// (unprocessable), not a 400, so "400" keeps meaning "not what the document describes".
// Give a refinement `params: domainRule` to make it one.
export const domainRule = { domainRule: true } as const;

export function isDomainRuleIssue(issue: z.core.$ZodIssue): boolean {
  return issue.code === "custom" && (issue.params as Record<string, unknown> | undefined)?.domainRule === true;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// A query string carries text; only these two spellings are a boolean filter.
export const queryBoolean = z.enum(["true", "false"]).transform((value) => value === "true");

// A comma-separated filter value, like status=pending,confirmed; spaces around a value are
// ignored. The document states the rule as a pattern; the server checks each value itself,
// so the error names the one that is wrong (status.1). test/http/openapi-exact.unit.test.ts
// holds the two to the same strings.
export function oneOrMany<T extends readonly [string, ...string[]]>(values: T) {
  const one = `(${values.map(escapeRegExp).join("|")})`;
  return z.string().transform((raw) => raw.split(",").map((value) => value.replace(/^ +| +$/g, ""))).pipe(
    z.array(z.enum(values)).min(1),
  ).meta({ description: `One or more of ${values.join(", ")}, comma-separated.`, pattern: `^ *${one} *(, *${one} *)*$` });
}
