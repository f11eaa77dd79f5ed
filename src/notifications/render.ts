// Renders a transactional email from the compiled templates: pure, no I/O. The
// MJML was compiled to HTML at build time (scripts/build-templates.ts); here only
// the placeholders are filled. Values are formatted for the guest (their locale)
// and the property (its time zone and local times), HTML-escaped in the HTML
// part, left as they are in the text part, and made single-line in the subject.
// A template that refers to anything the data does not provide throws.

import { compiledTemplates } from "./templates/compiled.ts";
import { isTemplateKey, type TemplateKey, templateKeys } from "./templates/sources.ts";
import { fillParsed, type ParsedTemplate, parseTemplate, TemplateError, type TemplateValues } from "./templates/syntax.ts";

export { isTemplateKey, TemplateError, type TemplateKey, templateKeys, type TemplateValues };

export interface TemplateData {
  /** The guest's BCP 47 locale (guests.locale), for numbers, money and dates. */
  locale: string;
  guest: { firstName: string; lastName: string };
  property: {
    name: string;
    /** IANA time zone: access code times are shown in it. */
    timezone: string;
    addressLine1: string | null;
    city: string | null;
    phone: string | null;
    email: string | null;
    /** "HH:MM:SS" (or "HH:MM"), local to the property. */
    checkInTime: string;
    checkOutTime: string;
  };
  unit: { name: string } | null;
  reservation: {
    confirmationCode: string;
    /** "YYYY-MM-DD", the property's calendar dates. */
    checkIn: string;
    checkOut: string;
    adults: number;
    children: number;
    /** Amounts in the currency's minor units. */
    totalAmount: number;
    amountPaid: number;
    balance: number;
    /** ISO 4217. */
    currency: string;
    cancellationReason: string | null;
  };
  /** Required by access_code_delivery. validFrom and validUntil are RFC 3339 instants. */
  accessCode?: { code: string; validFrom: string; validUntil: string };
}

interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

// The compiled templates are constants, so each part is parsed once rather than per email.
const parsedTemplates = Object.fromEntries(templateKeys.map((key) => {
  const { subject, html, text } = compiledTemplates[key];
  return [key, { subject: parseTemplate(subject), html: parseTemplate(html), text: parseTemplate(text) }];
})) as Readonly<Record<TemplateKey, Readonly<Record<keyof RenderedEmail, ParsedTemplate>>>>;

export function renderTemplate(key: TemplateKey, data: TemplateData): RenderedEmail {
  if (!isTemplateKey(key)) throw new TemplateError(`unknown template key ${JSON.stringify(key)}`);
  const template = parsedTemplates[key];
  const values = templateValues(data);
  return {
    subject: fillParsed(template.subject, values, singleLine).replace(/\s+/g, " ").trim(),
    html: fillParsed(template.html, values, escapeHtml),
    text: fillParsed(template.text, values, (value) => value),
  };
}

/**
 * The values the templates can refer to, formatted. A null value is one the
 * data does not have (no unit, no phone, no reason): templates show it only
 * inside its {{#name}} block. The accessCode.* names exist only when the data
 * has an access code.
 */
export function templateValues(data: TemplateData): TemplateValues {
  const locale = usableLocale(data.locale);
  const { guest, property, unit, reservation, accessCode } = data;
  const money = moneyFormatter(locale, reservation.currency);
  const nights = nightsBetween(reservation.checkIn, reservation.checkOut);
  const number = cachedFormat(`number|${locale}`, () => new Intl.NumberFormat(locale));
  const count = (n: number, one: string, many: string) => `${number.format(n)} ${n === 1 ? one : many}`;
  const address = [property.addressLine1, property.city].filter((part): part is string => !!part?.trim()).join(", ");
  const values: Record<string, string | null> = {
    "guest.firstName": guest.firstName,
    "guest.lastName": guest.lastName,
    "guest.fullName": `${guest.firstName} ${guest.lastName}`.trim(),
    "property.name": property.name,
    "property.timezone": property.timezone,
    "property.address": address || null,
    "property.phone": property.phone || null,
    "property.email": property.email || null,
    "property.checkInTime": formatClockTime(locale, property.checkInTime),
    "property.checkOutTime": formatClockTime(locale, property.checkOutTime),
    "unit.name": unit?.name || null,
    "reservation.confirmationCode": reservation.confirmationCode,
    "reservation.checkIn": formatDate(locale, reservation.checkIn),
    "reservation.checkOut": formatDate(locale, reservation.checkOut),
    "reservation.nights": count(nights, "night", "nights"),
    "reservation.guests": [
      count(reservation.adults, "adult", "adults"),
      ...(reservation.children > 0 ? [count(reservation.children, "child", "children")] : []),
    ].join(", "),
    "reservation.total": money(reservation.totalAmount),
    "reservation.paid": money(reservation.amountPaid),
    "reservation.balance": money(reservation.balance),
    "reservation.balanceDue": reservation.balance > 0 ? money(reservation.balance) : null,
    "reservation.cancellationReason": reservation.cancellationReason?.trim() || null,
  };
  if (accessCode) {
    values["accessCode.code"] = accessCode.code;
    values["accessCode.validFrom"] = formatInstant(locale, property.timezone, accessCode.validFrom);
    values["accessCode.validUntil"] = formatInstant(locale, property.timezone, accessCode.validUntil);
  }
  return values;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => htmlEntities[char] ?? char);
}

const htmlEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

// A subject is one header line: no line breaks or other control characters.
function singleLine(value: string): string {
  // deno-lint-ignore no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]+/g, " ");
}

// A well-formed tag that no locale data matches still formats (Intl falls back);
// only a malformed one would throw, and then English is better than no email.
function usableLocale(locale: string): string {
  try {
    return Intl.getCanonicalLocales(locale)[0] ?? "en";
  } catch {
    return "en";
  }
}

// Building an Intl formatter costs far more than using one (tens of microseconds, six or
// more per email), and a worker renders many emails in few locales, currencies and
// zones: each formatter is built once per kind, locale and options, and reused.
const MAX_CACHED_FORMATS = 1000;
const formats = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

function cachedFormat<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, build: () => F): F {
  let format = formats.get(key) as F | undefined;
  if (format === undefined) {
    // Bounded: a stream of unusual locales or zones cannot grow it without end.
    if (formats.size >= MAX_CACHED_FORMATS) formats.clear();
    format = build();
    formats.set(key, format);
  }
  return format;
}

// Minor units to the currency's major unit by its own fraction digits (EUR 2, JPY 0, KWD 3).
function moneyFormatter(locale: string, currency: string): (minor: number) => string {
  const format = cachedFormat(`money|${locale}|${currency}`, () => new Intl.NumberFormat(locale, { style: "currency", currency }));
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return (minor) => {
    if (!Number.isSafeInteger(minor)) throw new TemplateError(`amount ${minor} is not a whole number of minor units`);
    return format.format(minor / 10 ** digits);
  };
}

function calendarDate(value: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!date || date.toISOString().slice(0, 10) !== value) throw new TemplateError(`${JSON.stringify(value)} is not a YYYY-MM-DD date`);
  return date;
}

function nightsBetween(checkIn: string, checkOut: string): number {
  return Math.round((calendarDate(checkOut).getTime() - calendarDate(checkIn).getTime()) / 86_400_000);
}

// A stay date is the property's calendar date already: formatted as is (in UTC, so no zone shifts it).
function formatDate(locale: string, value: string): string {
  return cachedFormat(`date|${locale}`, () =>
    new Intl.DateTimeFormat(locale, { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" }))
    .format(calendarDate(value));
}

// A property's check-in or check-out time of day, in the guest's clock style (15:00 or 3:00 PM).
function formatClockTime(locale: string, value: string): string {
  const match = /^([01]\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?$/.exec(value);
  if (!match) throw new TemplateError(`${JSON.stringify(value)} is not a HH:MM:SS time`);
  return cachedFormat(`clock|${locale}`, () => new Intl.DateTimeFormat(locale, { hour: "numeric", minute: "2-digit", timeZone: "UTC" }))
    .format(new Date(Date.UTC(1970, 0, 1, Number(match[1]), Number(match[2]))));
}

// An instant, on the property's wall clock.
function formatInstant(locale: string, timeZone: string, value: string): string {
  const instant = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(instant)) {
    throw new TemplateError(`${JSON.stringify(value)} is not an RFC 3339 timestamp`);
  }
  return cachedFormat(`instant|${locale}|${timeZone}`, () =>
    new Intl.DateTimeFormat(locale, {
      weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "numeric", minute: "2-digit", timeZone,
    })).format(instant);
}
