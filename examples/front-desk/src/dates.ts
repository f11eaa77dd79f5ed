// Calendar dates (YYYY-MM-DD) as a property's front desk sees them: "today" is the date in
// the property's time zone, not the browser's, so a night clerk abroad sees the hotel's day.

// The date at `instant` in the IANA time zone `timeZone`.
export function dateIn(timeZone: string, instant: Date): string {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    .formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes): string => {
    const value = parts.find((candidate) => candidate.type === type)?.value;
    if (value === undefined) throw new Error(`no ${type} in the date of ${instant.toISOString()} in ${timeZone}`);
    return value;
  };
  return `${part("year")}-${part("month")}-${part("day")}`;
}

// The calendar date after `date`.
export function nextDate(date: string): string {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString().slice(0, 10);
}
