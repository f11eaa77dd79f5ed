// An RFC 5545 calendar of all-day events, as calendar services read a booking feed: each
// event's DTEND is the first night it no longer covers (exclusive, as a stay's check-out
// is), lines end in CRLF and are folded at 75 octets, text is escaped. Written here rather
// than with a library: the feed writes one kind of event with six properties, and
// parsing (which a library earns its keep at) is not done here.

export type FeedEvent = {
  uid: string;
  // YYYY-MM-DD, the first night and the first night after.
  startsOn: string;
  endsOn: string;
  summary: string;
  // When the event last changed, as DTSTAMP and LAST-MODIFIED (UTC).
  changedAt: Date;
};

export type FeedCalendar = { name: string; events: FeedEvent[] };

const encoder = new TextEncoder();
const MAX_OCTETS = 75;

// TEXT values escape backslash, semicolon, comma and line breaks (RFC 5545 3.3.11).
export function escapeText(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r\n|\r|\n/g, "\\n");
}

// A content line longer than 75 octets goes on over lines that begin with a space, never
// splitting a character's UTF-8 bytes (RFC 5545 3.1).
export function foldLine(line: string): string {
  const parts: string[] = [];
  let current = "";
  let octets = 0;
  for (const character of line) {
    const size = encoder.encode(character).length;
    // A continuation line's leading space counts against its 75.
    const limit = parts.length === 0 ? MAX_OCTETS : MAX_OCTETS - 1;
    if (octets + size > limit) {
      parts.push(current);
      current = "";
      octets = 0;
    }
    current += character;
    octets += size;
  }
  parts.push(current);
  return parts.join("\r\n ");
}

const basicDate = (day: string) => day.replaceAll("-", "");
const utcStamp = (at: Date) => at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z");

export function renderCalendar(calendar: FeedCalendar): string {
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//pms//calendar feed//EN",
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    `X-WR-CALNAME:${escapeText(calendar.name)}`,
  ];
  for (const event of calendar.events) {
    lines.push(
      "BEGIN:VEVENT",
      `UID:${escapeText(event.uid)}`,
      `DTSTAMP:${utcStamp(event.changedAt)}`,
      `LAST-MODIFIED:${utcStamp(event.changedAt)}`,
      `DTSTART;VALUE=DATE:${basicDate(event.startsOn)}`,
      `DTEND;VALUE=DATE:${basicDate(event.endsOn)}`,
      `SUMMARY:${escapeText(event.summary)}`,
      "TRANSP:OPAQUE",
      "END:VEVENT",
    );
  }
  lines.push("END:VCALENDAR");
  return lines.map(foldLine).join("\r\n") + "\r\n";
}
