// The nightly summary email to a tenant's owners and admins: per property, the
// night's arrivals and departures, who is in house, the unpaid balances and the
// open tasks. Pure, no I/O: the numbers come from SQL as NightlySummaryData, and
// here they are only formatted and filled into templates/nightly_summary.*.
// The properties are a list value (templates/syntax.ts), so each property's rows
// are markup in the MJML, HTML-escaped like every other value.

import { calendarDate, countFormatter, formatDate, formatNumber, moneyFormatter } from "./format.ts";
import { fillEmailTemplate, type RenderedEmail } from "./render.ts";
import { TemplateError, type TemplateValues } from "./templates/syntax.ts";

/** What SQL reports for one tenant's night, as JSON (the names are exactly these). */
export interface NightlySummaryData {
  tenantName: string;
  /** "YYYY-MM-DD", the night the summary is for. */
  businessDate: string;
  properties: Array<{
    name: string;
    timezone: string;
    /** "YYYY-MM-DD", the property's own local date for the night. */
    date: string;
    /** Reservations with check_in = date (not cancelled or no_show), and how many of them are checked in. */
    arrivals: number;
    arrivalsCheckedIn: number;
    departures: number;
    departuresCheckedOut: number;
    /** Checked in, staying over that night. */
    inHouse: number;
    /** Per currency, the checked-in and checked-out reservations with a balance > 0; balance in minor units. */
    unpaid: Array<{ currency: string; reservations: number; balance: number }>;
    /** Tasks not done or cancelled, and of those, the ones due before the end of the date. */
    openTasks: number;
    openTasksOverdue: number;
  }>;
}

// Owners and admins have no locale of their own yet: the summary is in English.
const SUMMARY_LOCALE = "en";

export function renderNightlySummary(data: NightlySummaryData): RenderedEmail {
  return fillEmailTemplate("nightly_summary", nightlySummaryValues(data));
}

/**
 * The values templates/nightly_summary.* refer to. properties is a list; in each
 * item localDate is null when the property's date is the business date (most
 * properties, in one zone), and openTasksOverdue null when none is overdue.
 */
export function nightlySummaryValues(data: NightlySummaryData): TemplateValues {
  const locale = SUMMARY_LOCALE;
  const count = countFormatter(locale);
  const number = (n: number) => formatNumber(locale, wholeCount(n));
  // "4 (3 checked in)"; "none" rather than "0 (0 checked in)".
  const ofWhich = (total: number, done: number, what: string) =>
    wholeCount(total) === 0 ? "none" : `${number(total)} (${number(done)} ${what})`;
  return {
    tenantName: data.tenantName,
    businessDate: formatDate(locale, data.businessDate),
    properties: data.properties.map((property) => {
      // A malformed date is a fault upstream even where the email would not show it.
      calendarDate(property.date);
      return {
        name: property.name,
        timezone: property.timezone,
        localDate: property.date === data.businessDate ? null : formatDate(locale, property.date),
        arrivals: ofWhich(property.arrivals, property.arrivalsCheckedIn, "checked in"),
        departures: ofWhich(property.departures, property.departuresCheckedOut, "checked out"),
        inHouse: number(property.inHouse),
        unpaid: property.unpaid.map((unpaid) => ({
          balance: moneyFormatter(locale, unpaid.currency)(unpaid.balance),
          reservations: count(wholeCount(unpaid.reservations), "reservation", "reservations"),
        })),
        openTasks: wholeCount(property.openTasks) === 0 ? "none" : number(property.openTasks),
        openTasksOverdue: wholeCount(property.openTasksOverdue) === 0 ? null : number(property.openTasksOverdue),
      };
    }),
  };
}

// The counts come from SQL as JSON: anything but a whole number of things is a fault upstream.
function wholeCount(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new TemplateError(`${n} is not a count`);
  return n;
}
