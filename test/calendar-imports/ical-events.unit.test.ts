// The nights real exports hold, read from files written as Airbnb, Vrbo, Booking.com and
// Google Calendar write them.
import assert from "node:assert/strict";
import { heldNights } from "../../src/calendar-imports/ical-events.ts";

const window = { from: "2026-12-01", to: "2028-12-01" };
const read = (name: string, timezone = "Europe/Berlin") =>
  heldNights(Deno.readTextFileSync(new URL(`./fixtures/${name}`, import.meta.url)), timezone, window);

Deno.test("Airbnb: all-day stays and blocks, DTEND exclusive, back-to-back stays kept apart", () => {
  assert.deepEqual(read("airbnb.ics"), {
    ok: true,
    events: [
      { startsOn: "2027-01-08", endsOn: "2027-01-12" },
      { startsOn: "2027-01-12", endsOn: "2027-01-15" },
      { startsOn: "2027-02-15", endsOn: "2027-03-01" },
    ],
  });
});

Deno.test("Vrbo: a cancelled event holds nothing", () => {
  assert.deepEqual(read("vrbo.ics"), { ok: true, events: [{ startsOn: "2027-03-20", endsOn: "2027-03-27" }] });
});

Deno.test("Booking.com: an event with a DURATION instead of a DTEND", () => {
  assert.deepEqual(read("booking.ics"), {
    ok: true,
    events: [{ startsOn: "2027-05-05", endsOn: "2027-05-08" }, { startsOn: "2027-06-10", endsOn: "2027-06-12" }],
  });
});

Deno.test("Google Calendar: time zones, a weekly rule with an EXDATE, a moved and a cancelled occurrence, free and same-day events", () => {
  assert.deepEqual(read("google.ics"), {
    ok: true,
    events: [
      // 15:00 to 11:00 in the file's own VTIMEZONE: the nights of the 2nd, 3rd and 4th.
      { startsOn: "2027-07-02", endsOn: "2027-07-05" },
      // 22:00 UTC is midnight in Berlin, the property's clock.
      { startsOn: "2027-08-02", endsOn: "2027-08-03" },
      // Weekly on Wednesdays, four times: the 8th excluded, the 15th moved to the 16th for two nights, the 22nd cancelled.
      { startsOn: "2027-09-01", endsOn: "2027-09-02" },
      { startsOn: "2027-09-16", endsOn: "2027-09-18" },
      // A TZID the file does not define (America/New_York), read as that IANA zone: 20:00 there is 02:00 the next day here.
      { startsOn: "2027-11-21", endsOn: "2027-11-22" },
    ],
  });
  // The same events on a clock west of New York: the visit starts on the 20th there.
  const west = read("google.ics", "America/Los_Angeles");
  assert.ok(west.ok);
  assert.deepEqual(west.events.at(-1), { startsOn: "2027-11-20", endsOn: "2027-11-22" });
});

Deno.test("only nights inside the window, and a file that is not a calendar is refused with why", () => {
  const near = heldNights(Deno.readTextFileSync(new URL("./fixtures/airbnb.ics", import.meta.url)), "UTC", { from: "2027-01-13", to: "2027-02-16" });
  assert.deepEqual(near, {
    ok: true,
    events: [{ startsOn: "2027-01-12", endsOn: "2027-01-15" }, { startsOn: "2027-02-15", endsOn: "2027-03-01" }],
  });
  const html = heldNights("<!doctype html><title>Sign in</title>", "UTC", window);
  assert.equal(html.ok, false);
  const card = heldNights("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ana\r\nEND:VCARD\r\n", "UTC", window);
  assert.deepEqual(card, { ok: false, message: "not an iCalendar: the file is a VCARD" });
});
