// The formatting every notification text shares, whatever its channel: money in
// the currency's own minor units, a stay's calendar dates, a property's times of
// day, and instants on a property's clock, each in the reader's locale. Pure.
// A value these cannot format is a TemplateError, never a silently wrong text.

import { TemplateError } from "./templates/syntax.ts";

// A well-formed tag that no locale data matches still formats (Intl falls back);
// only a malformed one would throw, and then English is better than no message.
export function usableLocale(locale: string): string {
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

export function cachedFormat<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, build: () => F): F {
  let format = formats.get(key) as F | undefined;
  if (format === undefined) {
    // Bounded: a stream of unusual locales or zones cannot grow it without end.
    if (formats.size >= MAX_CACHED_FORMATS) formats.clear();
    format = build();
    formats.set(key, format);
  }
  return format;
}

// The narrow spaces Intl writes between a time and its AM or PM, or between groups of
// digits, depend on the ICU data a runtime carries: the Deno the Edge Runtime runs writes
// "3:00\u202fPM" where a newer one writes "3:00 PM". Every text says them with a plain
// space, so that it reads the same wherever it is rendered.
function plainSpaces(text: string): string {
  return text.replace(/[\u2009\u202f]/g, " ");
}

// Minor units to the currency's major unit by its own fraction digits (EUR 2, JPY 0, KWD 3).
export function moneyFormatter(locale: string, currency: string): (minor: number) => string {
  const format = cachedFormat(`money|${locale}|${currency}`, () => new Intl.NumberFormat(locale, { style: "currency", currency }));
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return (minor) => {
    if (!Number.isSafeInteger(minor)) throw new TemplateError(`amount ${minor} is not a whole number of minor units`);
    return plainSpaces(format.format(minor / 10 ** digits));
  };
}

/** A number in the locale's digits and grouping: "1,234". */
export function formatNumber(locale: string, n: number): string {
  return plainSpaces(cachedFormat(`number|${locale}`, () => new Intl.NumberFormat(locale)).format(n));
}

/** "3 nights", "1 adult": a count in the locale's digits with the English noun it counts. */
export function countFormatter(locale: string): (n: number, one: string, many: string) => string {
  return (n, one, many) => `${formatNumber(locale, n)} ${n === 1 ? one : many}`;
}

export function calendarDate(value: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!date || date.toISOString().slice(0, 10) !== value) throw new TemplateError(`${JSON.stringify(value)} is not a YYYY-MM-DD date`);
  return date;
}

export function nightsBetween(checkIn: string, checkOut: string): number {
  return Math.round((calendarDate(checkOut).getTime() - calendarDate(checkIn).getTime()) / 86_400_000);
}

// A stay date is the property's calendar date already: formatted as is (in UTC, so no zone shifts it).
export function formatDate(locale: string, value: string): string {
  return plainSpaces(cachedFormat(`date|${locale}`, () =>
    new Intl.DateTimeFormat(locale, { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" }))
    .format(calendarDate(value)));
}

// A property's check-in or check-out time of day, in the guest's clock style (15:00 or 3:00 PM).
export function formatClockTime(locale: string, value: string): string {
  const match = /^([01]\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?$/.exec(value);
  if (!match) throw new TemplateError(`${JSON.stringify(value)} is not a HH:MM:SS time`);
  return plainSpaces(cachedFormat(`clock|${locale}`, () => new Intl.DateTimeFormat(locale, { hour: "numeric", minute: "2-digit", timeZone: "UTC" }))
    .format(new Date(Date.UTC(1970, 0, 1, Number(match[1]), Number(match[2])))));
}

export function parseInstant(value: string): number {
  const instant = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(instant)) {
    throw new TemplateError(`${JSON.stringify(value)} is not an RFC 3339 timestamp`);
  }
  return instant;
}

// An instant, on the property's wall clock.
export function formatInstant(locale: string, timeZone: string, value: string): string {
  return plainSpaces(cachedFormat(`instant|${locale}|${timeZone}`, () =>
    new Intl.DateTimeFormat(locale, {
      weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "numeric", minute: "2-digit", timeZone,
    })).format(parseInstant(value)));
}

// A stay date in few characters, for a text message: "Fri 26 Mar", "Fri, Mar 26". No
// year: a message about a stay is read around it.
export function formatShortDate(locale: string, value: string): string {
  return plainSpaces(cachedFormat(`short-date|${locale}`, () =>
    new Intl.DateTimeFormat(locale, { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" }))
    .format(calendarDate(value)));
}

// An instant on the property's wall clock in few characters: "26 Mar, 15:00", "Mar 26, 3:00 PM".
// No weekday and no year: the date and the time are what a guest at the door needs.
export function formatShortInstant(locale: string, timeZone: string, value: string): string {
  return plainSpaces(cachedFormat(`short-instant|${locale}|${timeZone}`, () =>
    new Intl.DateTimeFormat(locale, { day: "numeric", month: "short", hour: "numeric", minute: "2-digit", timeZone }))
    .format(parseInstant(value)));
}
