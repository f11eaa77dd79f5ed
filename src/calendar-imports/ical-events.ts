// The nights an imported iCalendar (RFC 5545) holds, on the property's clock. Parsing is
// ical.js's: line unfolding, escapes, VTIMEZONE definitions, recurrence rules with their
// EXDATEs and overridden occurrences (RECURRENCE-ID).
//
// What holds a night:
// - an all-day event holds the nights from DTSTART up to DTEND, which is exclusive (a stay
//   from the 8th to the 12th holds the 8th to the 11th); without DTEND, its DURATION, or
//   the one day;
// - a timed event holds the nights from the day it starts to the day it ends, each day
//   taken on the property's clock (15:00 on the 8th to 11:00 on the 12th holds the same
//   four nights); one that starts and ends on the same day holds none;
// - a recurring event holds each occurrence's nights;
// - a cancelled event (STATUS:CANCELLED), or one marked free (TRANSP:TRANSPARENT), holds
//   nothing.
// A TZID that the file does not define is read as the IANA zone of that name when there is
// one; a time with neither is floating, and read on the property's clock.
import ICAL from "ical.js";

export type HeldNights = { startsOn: string; endsOn: string };

export type CalendarEvents =
  | { ok: true; events: HeldNights[] }
  | { ok: false; message: string };

// A recurring event without an end yields occurrences up to the window's end; this bounds
// how many are looked at, whatever the rule.
const MAX_OCCURRENCES = 5_000;

// The nights held within [from, to) (YYYY-MM-DD, the property's dates), each event or
// occurrence once, in the file's order.
export function heldNights(text: string, timezone: string, window: { from: string; to: string }): CalendarEvents {
  let calendar: ICAL.Component;
  try {
    calendar = new ICAL.Component(ICAL.parse(text));
  } catch (error) {
    return { ok: false, message: `not an iCalendar: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (calendar.name !== "vcalendar") return { ok: false, message: `not an iCalendar: the file is a ${calendar.name.toUpperCase()}` };

  const days = localDays(timezone);
  const held: HeldNights[] = [];
  // A TZID the file does not define leaves ical.js's times floating; the event's own DTSTART
  // still names it.
  const add = (component: ICAL.Component, start: ICAL.Time, end: ICAL.Time) => {
    const tzid = component.getFirstProperty("dtstart")?.getParameter("tzid");
    const named = typeof tzid === "string" ? tzid : undefined;
    const startsOn = days(start, named);
    const endsOn = days(end, named);
    if (endsOn > startsOn && endsOn > window.from && startsOn < window.to) held.push({ startsOn, endsOn });
  };

  const components = calendar.getAllSubcomponents("vevent");
  const uidOf = (component: ICAL.Component) => String(component.getFirstPropertyValue("uid") ?? "");
  // Overridden occurrences, by the UID of the event they belong to, and the UIDs of the
  // recurring events themselves.
  const exceptions = new Map<string, ICAL.Component[]>();
  const recurring = new Set<string>();
  for (const component of components) {
    const uid = uidOf(component);
    if (component.hasProperty("recurrence-id")) exceptions.set(uid, [...exceptions.get(uid) ?? [], component]);
    else if (component.hasProperty("rrule")) recurring.add(uid);
  }

  try {
    for (const component of components) {
      if (!component.hasProperty("dtstart")) continue;
      const event = new ICAL.Event(component);
      if (!event.isRecurring()) {
        // An overridden occurrence of a recurring event counts as part of that event.
        if (event.isRecurrenceException() && recurring.has(event.uid)) continue;
        if (holds(component)) add(component, event.startDate, event.endDate);
        continue;
      }
      if (!holds(component)) continue;
      for (const exception of exceptions.get(event.uid) ?? []) event.relateException(exception);
      const iterator = event.iterator();
      for (let seen = 0; seen < MAX_OCCURRENCES; seen++) {
        const next = iterator.next();
        if (!next) break;
        const occurrence = event.getOccurrenceDetails(next);
        if (days(occurrence.startDate, undefined) >= window.to) break;
        if (holds(occurrence.item.component)) add(occurrence.item.component, occurrence.startDate, occurrence.endDate);
      }
    }
  } catch (error) {
    return { ok: false, message: `an event could not be read: ${error instanceof Error ? error.message : String(error)}` };
  }
  return { ok: true, events: held };
}

function holds(component: ICAL.Component): boolean {
  const status = String(component.getFirstPropertyValue("status") ?? "").toUpperCase();
  const transparency = String(component.getFirstPropertyValue("transp") ?? "").toUpperCase();
  return status !== "CANCELLED" && transparency !== "TRANSPARENT";
}

// The day (YYYY-MM-DD) a time falls on, on the property's clock. A date is that date.
function localDays(timezone: string): (time: ICAL.Time, tzid: string | undefined) => string {
  const format = new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit", day: "2-digit" });
  const onClock = (epochMs: number) => format.format(new Date(epochMs));
  return (time, tzid) => {
    if (time.isDate) return ymd(time.year, time.month, time.day);
    const zone = time.zone;
    if (zone && zone.tzid !== "floating") return onClock(time.toUnixTime() * 1000);
    // Floating, or a TZID the file does not define (ical.js leaves those floating).
    const named = knownZone(tzid);
    if (named === null) return ymd(time.year, time.month, time.day);
    return onClock(wallTimeIn(named, time));
  };
}

const ymd = (year: number, month: number, day: number) =>
  `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;

function knownZone(tzid: string | undefined): string | null {
  if (!tzid) return null;
  try {
    new Intl.DateTimeFormat("en", { timeZone: tzid });
    return tzid;
  } catch {
    return null;
  }
}

// The instant a wall-clock time names in an IANA zone: the UTC reading of the wall time,
// less the zone's offset at that instant, taken twice so that a time near a change of
// offset settles on the offset it is in.
function wallTimeIn(zone: string, time: ICAL.Time): number {
  const asUtc = Date.UTC(time.year, time.month - 1, time.day, time.hour, time.minute, time.second);
  const first = asUtc - offsetMs(zone, asUtc);
  return asUtc - offsetMs(zone, first);
}

function offsetMs(zone: string, epochMs: number): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric",
    hour: "numeric", minute: "numeric", second: "numeric",
  }).formatToParts(new Date(epochMs));
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(part("year"), part("month") - 1, part("day"), part("hour"), part("minute"), part("second"));
  return wall - Math.floor(epochMs / 1000) * 1000;
}
