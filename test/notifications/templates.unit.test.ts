// The transactional email templates: the compiled HTML is as new as its MJML, text
// and subject sources (and the SMS texts as their files), every placeholder
// resolves, each email carries what the guest needs, formatted for the guest and
// the property, and values are escaped in the HTML part only. Pure: no stack needed.
import assert from "node:assert/strict";
import {
  escapeHtml,
  renderTemplate,
  type TemplateData,
  TemplateError,
  type TemplateKey,
  templateValues,
  type TemplateValues,
} from "../../src/notifications/render.ts";
import { compiledTemplates, mjmlVersion, smsTemplates } from "../../src/notifications/templates/compiled.ts";
import {
  emailTemplateKeys,
  guestTemplateKeys,
  hashSources,
  smsSourceFileName,
  smsTemplateKeys,
  sourceFileNames,
} from "../../src/notifications/templates/sources.ts";
import { fillTemplate, placeholderNames } from "../../src/notifications/templates/syntax.ts";

const templatesDir = new URL("../../src/notifications/templates/", import.meta.url);
const packageJson = new URL("../../package.json", import.meta.url);

// A three-night stay in Lisbon, half paid, with every optional field present.
function stay(): TemplateData {
  return {
    locale: "en-GB",
    guest: { firstName: "Ana", lastName: "Silva" },
    property: {
      name: "Casa Azul",
      timezone: "Europe/Lisbon",
      addressLine1: "Rua do Sol 12",
      city: "Lisboa",
      phone: "+351912345678",
      email: "stay@casa-azul.example",
      checkInTime: "15:00:00",
      checkOutTime: "11:00:00",
    },
    unit: { name: "Room 3" },
    reservation: {
      confirmationCode: "CA-7Q2X",
      checkIn: "2027-03-26",
      checkOut: "2027-03-29",
      adults: 2,
      children: 1,
      totalAmount: 45000,
      amountPaid: 30000,
      balance: 15000,
      currency: "EUR",
      cancellationReason: "Flight cancelled by the airline",
    },
    accessCode: { code: "482913", validFrom: "2027-03-26T15:00:00Z", validUntil: "2027-03-29T11:00:00Z" },
  };
}

// The same stay with every optional value missing: no unit, no address or contact, no reason, fully paid.
function sparseStay(): TemplateData {
  const data = stay();
  data.unit = null;
  data.property = { ...data.property, addressLine1: null, city: null, phone: null, email: null };
  data.reservation = { ...data.reservation, amountPaid: 45000, balance: 0, cancellationReason: null };
  return data;
}

// What a reader of the HTML part sees in the body: no head, styles, comments or tags, whitespace collapsed.
function bodyText(html: string): string {
  return html
    .replace(/<head>[\s\S]*?<\/head>/, " ")
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

Deno.test("compiled.ts is as new as its sources (else: npm run templates:build)", async () => {
  const pinned = JSON.parse(await Deno.readTextFile(packageJson)).dependencies.mjml;
  assert.equal(
    mjmlVersion,
    pinned,
    `compiled.ts was built with MJML ${mjmlVersion} but package.json pins ${pinned}: run \`npm run templates:build\``,
  );
  assert.deepEqual(Object.keys(compiledTemplates), [...emailTemplateKeys]);
  for (const key of emailTemplateKeys) {
    const files = sourceFileNames(key);
    const sources = {
      subject: await Deno.readTextFile(new URL(files.subject, templatesDir)),
      text: await Deno.readTextFile(new URL(files.text, templatesDir)),
      mjml: await Deno.readTextFile(new URL(files.mjml, templatesDir)),
    };
    assert.equal(
      compiledTemplates[key].sourceHash,
      await hashSources(sources, pinned),
      `src/notifications/templates/${key}.{mjml,txt,subject.txt} differ from what compiled.ts was built from: ` +
        "run `npm run templates:build` and commit compiled.ts with them",
    );
    // The text part and the subject are the sources themselves (the subject without its newline).
    assert.equal(compiledTemplates[key].text, sources.text);
    assert.equal(compiledTemplates[key].subject, sources.subject.replace(/\n$/, ""));
  }
  // An SMS text is carried as its file holds it.
  assert.deepEqual(Object.keys(smsTemplates), [...smsTemplateKeys]);
  for (const key of smsTemplateKeys) {
    assert.equal(
      smsTemplates[key],
      await Deno.readTextFile(new URL(smsSourceFileName(key), templatesDir)),
      `src/notifications/templates/${smsSourceFileName(key)} differs from compiled.ts: ` +
        "run `npm run templates:build` and commit compiled.ts with it",
    );
  }
  // Every source in the folder belongs to a template key: none is left out of the build.
  const emailKeys = new Set<string>(emailTemplateKeys);
  const smsKeys = new Set<string>(smsTemplateKeys);
  for await (const entry of Deno.readDir(templatesDir)) {
    const smsKey = /^(.+)\.sms\.txt$/.exec(entry.name)?.[1];
    if (smsKey !== undefined) {
      assert.ok(smsKeys.has(smsKey), `${entry.name} is not the SMS text of a template key`);
      continue;
    }
    const key = /^(.+?)(?:\.subject\.txt|\.txt|\.mjml)$/.exec(entry.name)?.[1];
    if (key !== undefined) assert.ok(emailKeys.has(key), `${entry.name} is not the source of an email template key`);
  }
});

Deno.test("every placeholder in every template resolves, with and without the optional values", () => {
  for (const key of guestTemplateKeys) {
    for (const data of [stay(), sparseStay()]) {
      const provided = new Set(Object.keys(templateValues(data)));
      const { subject, text, html } = compiledTemplates[key];
      for (const [part, source] of Object.entries({ subject, text, html })) {
        const unknown = placeholderNames(source).filter((name) => !provided.has(name));
        assert.deepEqual(unknown, [], `${key} ${part} refers to names the renderer does not provide`);
      }
      const rendered = renderTemplate(key, data);
      for (const [part, output] of Object.entries(rendered)) {
        assert.doesNotMatch(output, /\{\{|\}\}/, `${key} ${part} kept a placeholder`);
        assert.doesNotMatch(output, /undefined|null|NaN/, `${key} ${part} shows a missing value`);
      }
    }
  }
});

Deno.test("the renderer fails loudly on a name the data does not provide or a malformed template", () => {
  const values = templateValues(stay());
  assert.equal(fillTemplate("{{property.name}} {{#unit.name}}({{unit.name}}){{/unit.name}}", values, escapeHtml), "Casa Azul (Room 3)");
  assert.throws(() => fillTemplate("Hi {{guest.nickname}}", values, escapeHtml), {
    name: "TemplateError",
    message: "the template uses {{guest.nickname}}, which the data does not provide",
  });
  assert.throws(() => fillTemplate("{{#guest.nickname}}x{{/guest.nickname}}", values, escapeHtml), TemplateError);
  // A null value outside its {{#name}} block is an error, not an empty string.
  const sparse = templateValues(sparseStay());
  assert.throws(() => fillTemplate("Unit: {{unit.name}}", sparse, escapeHtml), /\{\{unit\.name\}\} has no value here/);
  assert.throws(() => fillTemplate("{{#unit.name}}x", values, escapeHtml), /\{\{#unit\.name\}\} is never closed/);
  assert.throws(() => fillTemplate("{{#unit.name}}x{{/guest.firstName}}", values, escapeHtml), TemplateError);
  assert.throws(() => fillTemplate("Hi {{ guest.first name}}", values, escapeHtml), /malformed placeholder/);
  // The door-code email needs the door code.
  const withoutCode = stay();
  delete withoutCode.accessCode;
  assert.throws(() => renderTemplate("access_code_delivery", withoutCode), /\{\{accessCode\.[A-Za-z]+\}\}, which the data does not provide/);
  assert.throws(() => renderTemplate("welcome" as TemplateKey, stay()), /unknown template key "welcome"/);
  assert.throws(() => renderTemplate("nightly_summary" as TemplateKey, stay()), /nightly_summary is not a guest's email/);
});

Deno.test("a list repeats its block once per item, looking names up in the item first, then around the list", () => {
  const template = [
    "Report for {{tenant}}",
    "{{#rows}}",
    "- {{name}}: {{count}} {{unit}}{{#note}} ({{note}}){{/note}}",
    "{{/rows}}",
    "{{^rows}}",
    "Nothing to report.",
    "{{/rows}}",
    "",
  ].join("\n");
  const rows: TemplateValues[] = [
    { name: "Casa <Azul>", count: "3", note: null },
    { name: "Casa Verde", count: "1", note: "late", unit: "room" },
  ];
  assert.equal(
    fillTemplate(template, { tenant: "Acme", unit: "rooms", rows }, escapeHtml),
    "Report for Acme\n- Casa &lt;Azul&gt;: 3 rooms\n- Casa Verde: 1 room (late)\n",
  );
  // An empty list is like null: the inverted block shows, the block does not.
  assert.equal(fillTemplate(template, { tenant: "Acme", unit: "rooms", rows: [] }, escapeHtml), "Report for Acme\nNothing to report.\n");
  assert.equal(fillTemplate(template, { tenant: "Acme", unit: "rooms", rows: null }, escapeHtml), "Report for Acme\nNothing to report.\n");
  // Lists nest, and an inner item sees every scope around it.
  const nested = "{{#groups}}[{{label}}:{{#members}} {{label}}/{{name}}{{/members}}]{{/groups}}";
  assert.equal(
    fillTemplate(nested, { groups: [{ label: "a", members: [{ name: "x" }, { name: "y", label: "b" }] }, { label: "c", members: [] }] }, (v) => v),
    "[a: a/x b/y][c:]",
  );
  // A name no scope has fails, even inside a list; so does a list used as a value.
  assert.throws(() => fillTemplate(template, { tenant: "Acme", rows }, escapeHtml), /\{\{unit\}\}, which the data does not provide/);
  assert.throws(() => fillTemplate("{{rows}}", { rows }, escapeHtml), /\{\{rows\}\} is a list: repeat a block/);
  assert.deepEqual(placeholderNames(template), ["count", "name", "note", "rows", "tenant", "unit"]);
});

Deno.test("checkin_reminder: a welcome with the stay, the check-out time and the property's contact", () => {
  const email = renderTemplate("checkin_reminder", stay());
  assert.equal(email.subject, "Welcome to Casa Azul, Ana");
  assert.equal(
    email.text,
    `Hi Ana,

Welcome to Casa Azul! You are checked in, and we hope you enjoy your stay.

Confirmation code: CA-7Q2X
Your unit: Room 3
Arrival: Friday, 26 March 2027
Departure: Monday, 29 March 2027, check-out by 11:00
Length of stay: 3 nights
Guests: 2 adults, 1 child

Need anything during your stay?
Address: Rua do Sol 12, Lisboa
Phone: +351912345678
Email: stay@casa-azul.example

Casa Azul
`,
  );
  const body = bodyText(email.html);
  for (
    const expected of [
      "Welcome, Ana",
      "You are checked in at Casa Azul",
      "Confirmation code CA-7Q2X",
      "Your unit Room 3",
      "Arrival Friday, 26 March 2027",
      "Departure Monday, 29 March 2027, check-out by 11:00",
      "Length of stay 3 nights",
      "Guests 2 adults, 1 child",
      "Rua do Sol 12, Lisboa",
      "Phone: +351912345678",
      "Email: stay@casa-azul.example",
    ]
  ) assert.ok(body.includes(expected), `checkin_reminder HTML lacks "${expected}"`);
  assert.ok(email.html.includes('href="tel:+351912345678"'));
  assert.ok(email.html.includes('href="mailto:stay@casa-azul.example"'));
  assert.ok(email.html.includes("<title>Welcome to Casa Azul</title>"));

  const sparse = renderTemplate("checkin_reminder", sparseStay());
  assert.equal(
    sparse.text,
    `Hi Ana,

Welcome to Casa Azul! You are checked in, and we hope you enjoy your stay.

Confirmation code: CA-7Q2X
Arrival: Friday, 26 March 2027
Departure: Monday, 29 March 2027, check-out by 11:00
Length of stay: 3 nights
Guests: 2 adults, 1 child

Need anything during your stay?
Just ask the staff at Casa Azul.

Casa Azul
`,
  );
  const sparseBody = bodyText(sparse.html);
  assert.ok(sparseBody.includes("Just ask the staff at Casa Azul."));
  for (const absent of ["Your unit", "Phone:", "Email:", "Rua do Sol", "tel:", "mailto:"]) {
    assert.ok(!sparse.html.includes(absent), `checkin_reminder HTML without the optional values still has "${absent}"`);
  }
});

Deno.test("checkout_summary: the stay summary with nights, total, paid and balance, and a thank-you", () => {
  const email = renderTemplate("checkout_summary", stay());
  assert.equal(email.subject, "Thank you for staying at Casa Azul");
  assert.equal(
    email.text,
    `Hi Ana,

Thank you for staying at Casa Azul. We hope to welcome you back soon.

Your stay
Confirmation code: CA-7Q2X
Unit: Room 3
Arrival: Friday, 26 March 2027
Departure: Monday, 29 March 2027
Length of stay: 3 nights
Guests: 2 adults, 1 child

Total: €450.00
Paid: €300.00
Balance: €150.00

A balance of €150.00 is still due. Casa Azul will be in touch about settling it.

Questions about your stay or your bill?
Address: Rua do Sol 12, Lisboa
Phone: +351912345678
Email: stay@casa-azul.example

Casa Azul
`,
  );
  const body = bodyText(email.html);
  for (
    const expected of [
      "Thank you, Ana",
      "Thank you for staying at Casa Azul. We hope to welcome you back soon.",
      "Confirmation code CA-7Q2X",
      "Arrival Friday, 26 March 2027",
      "Departure Monday, 29 March 2027",
      "Length of stay 3 nights",
      "Total €450.00 Paid €300.00 Balance €150.00",
      "A balance of €150.00 is still due.",
    ]
  ) assert.ok(body.includes(expected), `checkout_summary HTML lacks "${expected}"`);

  // Fully paid: a zero balance and no "still due" line, in either part.
  const paid = renderTemplate("checkout_summary", sparseStay());
  assert.ok(paid.text.includes("Total: €450.00\nPaid: €450.00\nBalance: €0.00\n\nQuestions about your stay or your bill?\n"));
  assert.ok(bodyText(paid.html).includes("Total €450.00 Paid €450.00 Balance €0.00"));
  assert.ok(!paid.text.includes("still due"));
  assert.ok(!paid.html.includes("still due"));

  // One night across a month end, one adult, no children.
  const short = stay();
  short.reservation = { ...short.reservation, checkIn: "2027-03-31", checkOut: "2027-04-01", adults: 1, children: 0 };
  const shortText = renderTemplate("checkout_summary", short).text;
  assert.ok(shortText.includes("Arrival: Wednesday, 31 March 2027\nDeparture: Thursday, 1 April 2027\nLength of stay: 1 night\nGuests: 1 adult\n"));
});

Deno.test("money is in the guest's locale and the currency's own minor units", () => {
  const amounts = (locale: string, currency: string, totalAmount: number, amountPaid: number) => {
    const data = stay();
    data.locale = locale;
    data.reservation = { ...data.reservation, currency, totalAmount, amountPaid, balance: totalAmount - amountPaid };
    return /Total: (.*)\nPaid: (.*)\nBalance: (.*)\n/.exec(renderTemplate("checkout_summary", data).text)?.slice(1);
  };
  assert.deepEqual(amounts("en-GB", "EUR", 45000, 30000), ["€450.00", "€300.00", "€150.00"]);
  assert.deepEqual(amounts("de-DE", "EUR", 123450, 23450), ["1.234,50\u00a0€", "234,50\u00a0€", "1.000,00\u00a0€"]);
  assert.deepEqual(amounts("en", "USD", 9999, 10999), ["$99.99", "$109.99", "-$10.00"]);
  assert.deepEqual(amounts("en", "JPY", 45000, 0), ["¥45,000", "¥0", "¥45,000"]); // no minor unit
  assert.deepEqual(amounts("en", "KWD", 12345, 345), ["KWD\u00a012.345", "KWD\u00a00.345", "KWD\u00a012.000"]); // three digits
});

Deno.test("reservation_cancelled: property, dates, confirmation code and the reason when there is one", () => {
  const email = renderTemplate("reservation_cancelled", stay());
  assert.equal(email.subject, "Your reservation CA-7Q2X at Casa Azul is cancelled");
  assert.equal(
    email.text,
    `Hi Ana,

Your reservation at Casa Azul has been cancelled.

Confirmation code: CA-7Q2X
Unit: Room 3
Arrival: Friday, 26 March 2027
Departure: Monday, 29 March 2027
Reason: Flight cancelled by the airline

If you did not expect this, or have a question about a payment you made, contact Casa Azul:
Phone: +351912345678
Email: stay@casa-azul.example

Casa Azul
`,
  );
  const body = bodyText(email.html);
  for (
    const expected of [
      "Your reservation is cancelled",
      "Hi Ana, your reservation at Casa Azul has been cancelled.",
      "Confirmation code CA-7Q2X",
      "Arrival Friday, 26 March 2027",
      "Departure Monday, 29 March 2027",
      "Reason Flight cancelled by the airline",
    ]
  ) assert.ok(body.includes(expected), `reservation_cancelled HTML lacks "${expected}"`);

  // No reason: no reason line at all (nor an empty one).
  const noReason = renderTemplate("reservation_cancelled", sparseStay());
  assert.equal(
    noReason.text,
    `Hi Ana,

Your reservation at Casa Azul has been cancelled.

Confirmation code: CA-7Q2X
Arrival: Friday, 26 March 2027
Departure: Monday, 29 March 2027

If you did not expect this, or have a question about a payment you made, contact Casa Azul:
Please reply to this email.

Casa Azul
`,
  );
  assert.ok(!noReason.html.includes("Reason"));
  assert.ok(bodyText(noReason.html).includes("Departure Monday, 29 March 2027 If you did not expect this"));
  // A blank reason is no reason.
  const blank = stay();
  blank.reservation = { ...blank.reservation, cancellationReason: "   " };
  assert.ok(!renderTemplate("reservation_cancelled", blank).text.includes("Reason"));
});

Deno.test("access_code_delivery: the code, its validity window in the property's time, the address and check-in time", () => {
  const email = renderTemplate("access_code_delivery", stay());
  assert.equal(email.subject, "Your door code for Casa Azul");
  // Lisbon moves to summer time on 28 March 2027: the code ends at 11:00 UTC, 12:00 on the property's clock.
  assert.equal(
    email.text,
    `Hi Ana,

Here is your door code for Casa Azul, Room 3:

    482913

Valid from: Fri, 26 Mar 2027, 15:00
Valid until: Mon, 29 Mar 2027, 12:00
Times are the property's local time (Europe/Lisbon).

Address: Rua do Sol 12, Lisboa
Check-in: Friday, 26 March 2027, from 15:00
Check-out: Monday, 29 March 2027, by 11:00
Confirmation code: CA-7Q2X

Please keep this code to yourself.
Trouble at the door? Call +351912345678.

Casa Azul
`,
  );
  const body = bodyText(email.html);
  for (
    const expected of [
      "Hi Ana, here is your door code for Casa Azul, Room 3:",
      "482913",
      "Valid from Fri, 26 Mar 2027, 15:00 Valid until Mon, 29 Mar 2027, 12:00",
      "Times are the property's local time (Europe/Lisbon).",
      "Address Rua do Sol 12, Lisboa",
      "Check-in Friday, 26 March 2027, from 15:00",
      "Check-out Monday, 29 March 2027, by 11:00",
      "Confirmation code CA-7Q2X",
    ]
  ) assert.ok(body.includes(expected), `access_code_delivery HTML lacks "${expected}"`);

  const sparse = renderTemplate("access_code_delivery", sparseStay());
  assert.ok(sparse.text.startsWith("Hi Ana,\n\nHere is your door code for Casa Azul:\n\n    482913\n"));
  assert.ok(sparse.text.endsWith("Confirmation code: CA-7Q2X\n\nPlease keep this code to yourself.\n\nCasa Azul\n"));
  assert.ok(!sparse.text.includes("Address"));
  assert.ok(!sparse.html.includes("Address"));
  assert.ok(!sparse.html.includes("Trouble at the door"));
});

Deno.test("access code times are on the property's clock, in the guest's style", () => {
  const window = (timezone: string, locale: string) => {
    const data = stay();
    data.locale = locale;
    data.property = { ...data.property, timezone };
    const { text } = renderTemplate("access_code_delivery", data);
    return /Valid from: (.*)\nValid until: (.*)\nTimes are the property's local time \((.*)\)\./.exec(text)?.slice(1);
  };
  assert.deepEqual(window("Europe/Lisbon", "en-GB"), ["Fri, 26 Mar 2027, 15:00", "Mon, 29 Mar 2027, 12:00", "Europe/Lisbon"]);
  assert.deepEqual(window("America/New_York", "en-GB"), ["Fri, 26 Mar 2027, 11:00", "Mon, 29 Mar 2027, 7:00", "America/New_York"]);
  assert.deepEqual(window("America/New_York", "en"), ["Fri, Mar 26, 2027, 11:00 AM", "Mon, Mar 29, 2027, 7:00 AM", "America/New_York"]);
  assert.deepEqual(window("Asia/Tokyo", "en-GB"), ["Sat, 27 Mar 2027, 0:00", "Mon, 29 Mar 2027, 20:00", "Asia/Tokyo"]);
  // The property's check-in and check-out times are times of day: no zone moves them.
  const us = stay();
  us.locale = "en";
  us.property = { ...us.property, timezone: "America/New_York" };
  const text = renderTemplate("access_code_delivery", us).text;
  assert.ok(text.includes("Check-in: Friday, March 26, 2027, from 3:00 PM\nCheck-out: Monday, March 29, 2027, by 11:00 AM\n"));
});

Deno.test("values are HTML-escaped in the HTML part only; the subject stays one plain line", () => {
  const data = stay();
  data.property = { ...data.property, name: '<script>alert("x")</script> & Co' };
  data.guest = { firstName: "D'Arcy", lastName: "O'Neil" };
  data.reservation = { ...data.reservation, cancellationReason: "Double <b>booking</b> & overlap" };
  const escapedName = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co";
  for (const key of guestTemplateKeys) {
    const email = renderTemplate(key, data);
    assert.ok(email.html.includes(escapedName), `${key} HTML lacks the escaped property name`);
    assert.ok(!email.html.includes("<script"), `${key} HTML has a raw <script>`);
    assert.ok(!email.html.includes("D'Arcy"), `${key} HTML has an unescaped apostrophe from the data`);
    assert.ok(email.html.includes("D&#39;Arcy"), `${key} HTML lacks the escaped guest name`);
    assert.ok(email.text.includes('<script>alert("x")</script> & Co'), `${key} text lacks the raw property name`);
    assert.ok(email.text.includes("Hi D'Arcy,"), `${key} text lacks the raw guest name`);
    assert.ok(email.subject.includes('<script>alert("x")</script> & Co'), `${key} subject lacks the raw property name`);
  }
  const cancelled = renderTemplate("reservation_cancelled", data);
  assert.ok(cancelled.html.includes("Double &lt;b&gt;booking&lt;/b&gt; &amp; overlap"));
  assert.ok(cancelled.text.includes("Reason: Double <b>booking</b> & overlap\n"));
  assert.equal(cancelled.subject, 'Your reservation CA-7Q2X at <script>alert("x")</script> & Co is cancelled');

  // Line breaks in a value cannot break the subject header.
  const multiline = stay();
  multiline.property = { ...multiline.property, name: "Casa\r\nBcc: someone" };
  assert.equal(renderTemplate("access_code_delivery", multiline).subject, "Your door code for Casa Bcc: someone");
});

Deno.test("the HTML loads nothing from elsewhere: no http(s) URL, image, link or web font", () => {
  // Every email as compiled (the nightly summary's rendered HTML is checked in summary.unit.test.ts).
  for (const key of emailTemplateKeys) {
    assert.doesNotMatch(compiledTemplates[key].html, /https?:|<img|<link|@import|@font-face|url\(|src=/i, `${key} HTML loads a resource`);
  }
  for (const key of guestTemplateKeys) {
    for (const html of [compiledTemplates[key].html, renderTemplate(key, stay()).html]) {
      assert.doesNotMatch(html, /https?:/i, `${key} HTML has an http(s) URL`);
      assert.doesNotMatch(html, /<img|<link|@import|@font-face|url\(|src=/i, `${key} HTML loads a resource`);
      assert.match(html, /^<!doctype html>\n<html lang="en"/);
    }
  }
});
