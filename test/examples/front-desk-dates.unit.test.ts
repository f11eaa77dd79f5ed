// The front desk's "today" is the property's date, whatever the browser's zone.
import assert from "node:assert/strict";
import { dateIn, nextDate } from "../../examples/front-desk/src/dates.ts";

Deno.test("today is the date in the property's time zone, on either side of midnight", () => {
  const instant = new Date("2027-03-10T23:30:00Z");
  assert.equal(dateIn("Europe/Lisbon", instant), "2027-03-10");
  assert.equal(dateIn("Asia/Tokyo", instant), "2027-03-11");
  assert.equal(dateIn("America/Los_Angeles", instant), "2027-03-10");
  assert.equal(dateIn("Pacific/Kiritimati", new Date("2027-12-31T10:00:00Z")), "2028-01-01");
});

Deno.test("the next date crosses months, years and leap days", () => {
  assert.equal(nextDate("2027-03-10"), "2027-03-11");
  assert.equal(nextDate("2027-02-28"), "2027-03-01");
  assert.equal(nextDate("2028-02-28"), "2028-02-29");
  assert.equal(nextDate("2027-12-31"), "2028-01-01");
});
