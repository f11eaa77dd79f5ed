// The nightly summary email to owners and admins: one block per property with the
// night's arrivals, departures, in-house stays, unpaid balances per currency and
// open tasks; a tenant without properties still gets a summary; every value is
// escaped in the HTML part. Pure: no stack needed.
import assert from "node:assert/strict";
import { type NightlySummaryData, nightlySummaryValues, renderNightlySummary } from "../../src/notifications/summary.ts";
import { compiledTemplates } from "../../src/notifications/templates/compiled.ts";
import { placeholderNames } from "../../src/notifications/templates/syntax.ts";

// Two properties: one on the business date with some of everything, one a day ahead
// (across the date line) with a quiet night.
function night(): NightlySummaryData {
  return {
    tenantName: "Acme Stays",
    businessDate: "2027-03-25",
    properties: [
      {
        name: "Casa Azul",
        timezone: "Europe/Lisbon",
        date: "2027-03-25",
        arrivals: 4,
        arrivalsCheckedIn: 3,
        departures: 2,
        departuresCheckedOut: 2,
        inHouse: 7,
        unpaid: [{ currency: "EUR", reservations: 2, balance: 15000 }, { currency: "USD", reservations: 1, balance: 123456 }],
        openTasks: 5,
        openTasksOverdue: 2,
      },
      {
        name: "Harbour Loft",
        timezone: "Pacific/Auckland",
        date: "2027-03-26",
        arrivals: 0,
        arrivalsCheckedIn: 0,
        departures: 1,
        departuresCheckedOut: 0,
        inHouse: 1,
        unpaid: [],
        openTasks: 1,
        openTasksOverdue: 0,
      },
    ],
  };
}

const footer = "Arrivals and departures are the reservations due that day (cancellations and no-shows left out), with how many " +
  "have checked in or out. Unpaid counts the checked-in and checked-out reservations with a balance. Overdue tasks were due " +
  "before the end of the day.\n\nYou receive this as an owner or admin of Acme Stays. To stop it, turn off the nightly " +
  "summary in the notification settings.\n";

// What a reader of the HTML part sees in the body: no head, styles, comments or tags, whitespace collapsed.
function bodyText(html: string): string {
  return html
    .replace(/<head>[\s\S]*?<\/head>/, " ")
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

Deno.test("nightly summary: per property, the night's arrivals, departures, in-house stays, unpaid balances and tasks", () => {
  const email = renderNightlySummary(night());
  assert.equal(email.subject, "Nightly summary for Acme Stays — Thursday, March 25, 2027");
  assert.equal(
    email.text,
    `Nightly summary for Acme Stays
Thursday, March 25, 2027

Casa Azul
Arrivals: 4 (3 checked in)
Departures: 2 (2 checked out)
In house: 7
Unpaid: €150.00 on 2 reservations
Unpaid: $1,234.56 on 1 reservation
Open tasks: 5 (2 overdue)

Harbour Loft
Local date: Friday, March 26, 2027 (Pacific/Auckland)
Arrivals: none
Departures: 1 (0 checked out)
In house: 1
Unpaid: none
Open tasks: 1

${footer}`,
  );
  const body = bodyText(email.html);
  for (
    const expected of [
      "Nightly summary Thursday, March 25, 2027",
      "Casa Azul Arrivals 4 (3 checked in) Departures 2 (2 checked out) In house 7 " +
      "Unpaid €150.00 on 2 reservations $1,234.56 on 1 reservation Open tasks 5 ( 2 overdue )",
      "Harbour Loft Local date: Friday, March 26, 2027 (Pacific/Auckland) Arrivals none Departures 1 (0 checked out) " +
      "In house 1 Unpaid none Open tasks 1 Arrivals and departures",
      "You receive this as an owner or admin of Acme Stays.",
    ]
  ) assert.ok(body.includes(expected), `nightly_summary HTML lacks "${expected}"`);
  assert.ok(!body.includes("no properties"));
  assert.ok(email.html.includes("<title>Nightly summary for Acme Stays</title>"));
  for (const part of [email.subject, email.text, email.html]) {
    assert.doesNotMatch(part, /\{\{|\}\}|undefined|null|NaN/);
  }
});

Deno.test("nightly summary: a tenant without properties still gets one, saying so", () => {
  const email = renderNightlySummary({ tenantName: "Acme Stays", businessDate: "2027-03-25", properties: [] });
  assert.equal(email.subject, "Nightly summary for Acme Stays — Thursday, March 25, 2027");
  assert.equal(
    email.text,
    `Nightly summary for Acme Stays
Thursday, March 25, 2027

Acme Stays has no properties yet: there is nothing to summarise.

${footer}`,
  );
  const body = bodyText(email.html);
  assert.ok(body.includes("Nightly summary Thursday, March 25, 2027 Acme Stays has no properties yet: there is nothing to summarise."));
  assert.ok(!body.includes("Arrivals none"));
  assert.ok(!email.html.includes("Open tasks"));
});

Deno.test("nightly summary: money in each currency's own minor units, counts in English", () => {
  const data = night();
  data.properties[0]!.unpaid = [
    { currency: "JPY", reservations: 3, balance: 45000 },
    { currency: "KWD", reservations: 1, balance: 12345 },
    { currency: "GBP", reservations: 1200, balance: 987654321 },
  ];
  data.properties[0]!.inHouse = 1234;
  const { text } = renderNightlySummary(data);
  assert.ok(
    text.includes(
      "In house: 1,234\nUnpaid: ¥45,000 on 3 reservations\nUnpaid: KWD\u00a012.345 on 1 reservation\nUnpaid: £9,876,543.21 on 1,200 reservations\n",
    ),
    text,
  );
});

Deno.test("nightly summary: values are escaped in the HTML part only, and the subject stays one line", () => {
  const data = night();
  data.tenantName = 'Acme & <b>"Stays"</b>';
  data.properties[0]!.name = "<script>alert('x')</script>";
  const email = renderNightlySummary(data);
  assert.ok(email.html.includes("Acme &amp; &lt;b&gt;&quot;Stays&quot;&lt;/b&gt;"));
  assert.ok(email.html.includes("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
  assert.ok(!email.html.includes("<script"));
  assert.ok(!email.html.includes("<b>"));
  assert.ok(email.text.includes("\n<script>alert('x')</script>\nArrivals: 4 (3 checked in)\n"));
  assert.equal(email.subject, 'Nightly summary for Acme & <b>"Stays"</b> — Thursday, March 25, 2027');
  data.tenantName = "Acme\r\nBcc: someone";
  assert.equal(renderNightlySummary(data).subject, "Nightly summary for Acme Bcc: someone — Thursday, March 25, 2027");
  // Nothing loads from elsewhere, as in every email.
  assert.doesNotMatch(email.html, /https?:|<img|<link|@import|@font-face|url\(|src=/i);
  assert.match(email.html, /^<!doctype html>\n<html lang="en"/);
});

Deno.test("nightly summary: every name the template uses is a value it gets; bad numbers from SQL fail loudly", () => {
  // The names at the top, in a property, and in an unpaid currency's line.
  const values = nightlySummaryValues(night());
  const property = (values.properties as readonly Record<string, unknown>[])[0]!;
  const unpaid = (property.unpaid as readonly Record<string, unknown>[])[0]!;
  const provided = new Set([...Object.keys(values), ...Object.keys(property), ...Object.keys(unpaid)]);
  const { subject, text, html } = compiledTemplates.nightly_summary;
  for (const [part, source] of Object.entries({ subject, text, html })) {
    assert.deepEqual(placeholderNames(source).filter((name) => !provided.has(name)), [], `nightly_summary ${part}`);
  }

  const bad = (change: (data: NightlySummaryData) => void) => {
    const data = night();
    change(data);
    return () => renderNightlySummary(data);
  };
  assert.throws(bad((data) => (data.businessDate = "2027-02-30")), { name: "TemplateError", message: '"2027-02-30" is not a YYYY-MM-DD date' });
  assert.throws(bad((data) => (data.properties[1]!.date = "26/03/2027")), /is not a YYYY-MM-DD date/);
  assert.throws(bad((data) => (data.properties[0]!.arrivals = 2.5)), { name: "TemplateError", message: "2.5 is not a count" });
  assert.throws(bad((data) => (data.properties[0]!.openTasksOverdue = -1)), /-1 is not a count/);
  assert.throws(bad((data) => (data.properties[0]!.unpaid[0]!.balance = 150.5)), /not a whole number of minor units/);
});
