// The iCalendar writer on its own: RFC 5545's line endings, folding and escaping, and
// all-day events whose DTEND is the first night not covered.
import assert from "node:assert/strict";
import { escapeText, foldLine, renderCalendar } from "../../src/calendar-feeds/ical.ts";

const octets = (text: string) => new TextEncoder().encode(text).length;

Deno.test("a calendar of all-day events: CRLF lines, exclusive DTEND, the UTC stamp of its last change", () => {
  const body = renderCalendar({
    name: "Room 101, Harbour House",
    events: [{ uid: "stay-1@calendar-feed", startsOn: "2027-06-10", endsOn: "2027-06-13", summary: "Reserved",
      changedAt: new Date("2026-12-01T09:30:05.123Z") }],
  });
  assert.ok(body.endsWith("\r\n"));
  assert.ok(!/[^\r]\n/.test(body), "every line ends in CRLF");
  assert.deepEqual(body.split("\r\n").slice(0, -1), [
    "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//pms//calendar feed//EN", "CALSCALE:GREGORIAN", "METHOD:PUBLISH",
    "X-WR-CALNAME:Room 101\\, Harbour House",
    "BEGIN:VEVENT", "UID:stay-1@calendar-feed", "DTSTAMP:20261201T093005Z", "LAST-MODIFIED:20261201T093005Z",
    "DTSTART;VALUE=DATE:20270610", "DTEND;VALUE=DATE:20270613", "SUMMARY:Reserved", "TRANSP:OPAQUE", "END:VEVENT",
    "END:VCALENDAR",
  ]);
});

Deno.test("text escapes backslash, semicolon, comma and line breaks", () => {
  assert.equal(escapeText("a\\b;c,d\ne\r\nf"), "a\\\\b\\;c\\,d\\ne\\nf");
});

Deno.test("a long line folds at 75 octets, never inside a character, and unfolds to itself", () => {
  const line = `X-WR-CALNAME:${"Quinta do Mar – Casa ".repeat(8)}`;
  const folded = foldLine(line);
  const parts = folded.split("\r\n");
  assert.ok(parts.length > 1);
  for (const [index, part] of parts.entries()) {
    assert.ok(octets(part) <= 75, `line ${index} has ${octets(part)} octets`);
    if (index > 0) assert.ok(part.startsWith(" "), "a continuation begins with a space");
  }
  assert.equal(folded.replaceAll("\r\n ", ""), line, "unfolding gives the line back");
  assert.equal(foldLine("SHORT:line"), "SHORT:line");
});
