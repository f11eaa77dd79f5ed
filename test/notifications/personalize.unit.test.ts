// One template filled with tokens for many recipients: every template's shared body, with
// a recipient's substitutions put in as SendGrid puts them, is byte for byte the email
// rendered for that recipient alone; emails of one shape share their body, others do not;
// and an email whose values would meet a token, or pass SendGrid's limits, is not
// personalized. Pure: no stack needed.
import assert from "node:assert/strict";
import { fillEmailTemplate, type TemplateData, templateValues, type TemplateValues } from "../../src/notifications/render.ts";
import {
  MAX_SUBSTITUTION_BYTES,
  MAX_SUBSTITUTIONS,
  personalizeEmail,
  type PersonalizedEmail,
  substitutionBytes,
  TOKEN_DELIMITER,
} from "../../src/notifications/personalize.ts";
import { type NightlySummaryData, nightlySummaryValues } from "../../src/notifications/summary.ts";
import { compiledTemplates } from "../../src/notifications/templates/compiled.ts";
import { type EmailTemplateKey, emailTemplateKeys, guestTemplateKeys } from "../../src/notifications/templates/sources.ts";

// A three-night stay with every optional value, in the guest's own words where the data
// can carry anything: markup, quotes, ampersands, accents and a line break, which the HTML
// part escapes and the text part keeps.
function stay(overrides: { firstName?: string; property?: string; reason?: string | null } = {}): TemplateData {
  return {
    locale: "en-GB",
    guest: { firstName: overrides.firstName ?? "Ana", lastName: "Silva & Sons <b>\"O'Neil\"</b>" },
    property: {
      name: overrides.property ?? "Casa Azul",
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
      cancellationReason: overrides.reason === undefined ? "Flight\ncancelled — <again> & again" : overrides.reason,
    },
    accessCode: { code: "482913", validFrom: "2027-03-26T15:00:00Z", validUntil: "2027-03-29T11:00:00Z" },
  };
}

// The same stay with every optional value missing.
function sparseStay(): TemplateData {
  const data = stay({ reason: null });
  data.unit = null;
  data.property = { ...data.property, addressLine1: null, city: null, phone: null, email: null };
  data.reservation = { ...data.reservation, amountPaid: 45000, balance: 0 };
  return data;
}

function night(properties: number, name = "Acme & Co <Stays>"): NightlySummaryData {
  return {
    tenantName: name,
    businessDate: "2027-03-25",
    properties: Array.from({ length: properties }, (_, index) => ({
      name: `Casa ${index} "Azul"`,
      timezone: "Europe/Lisbon",
      date: index % 2 === 0 ? "2027-03-25" : "2027-03-26",
      arrivals: index,
      arrivalsCheckedIn: 0,
      departures: 1,
      departuresCheckedOut: 1,
      inHouse: 3,
      unpaid: index % 2 === 0 ? [{ currency: "EUR", reservations: 2, balance: 15000 }] : [],
      openTasks: 2,
      openTasksOverdue: index % 3 === 0 ? 1 : 0,
    })),
  };
}

// Every data set each template is held to: the guest templates with all and none of the
// optional values and in another locale; the nightly summary with none, one and several
// properties.
function cases(key: EmailTemplateKey): [string, TemplateValues][] {
  if (key === "nightly_summary") return [0, 1, 3].map((n) => [`${n} properties`, nightlySummaryValues(night(n))]);
  const german = stay({ firstName: "Jürgen" });
  german.locale = "de-DE";
  return [["every value", stay()], ["no optional value", sparseStay()], ["de-DE", german]].map(([label, data]) => [
    label as string,
    templateValues(data as TemplateData),
  ]);
}

// SendGrid's substitution of one personalization: every token, wherever it is, by its
// value. Written here apart from the worker's code, token by token, so a value that came
// in with a token in it would be replaced too and show.
function asSendGridSends(body: string, substitutions: Readonly<Record<string, string>>): string {
  let copy = body;
  for (const [token, value] of Object.entries(substitutions)) copy = copy.split(token).join(value);
  return copy;
}

function personalized(key: EmailTemplateKey, values: TemplateValues): PersonalizedEmail {
  const result = personalizeEmail(key, values);
  assert.ok(!("unfit" in result), `${key} can be personalized: ${JSON.stringify(result)}`);
  return result;
}

Deno.test("every template: the shared body with a recipient's substitutions is byte for byte the email rendered alone", () => {
  assert.deepEqual([...emailTemplateKeys].sort(), Object.keys(compiledTemplates).sort(), "every compiled template is covered");
  for (const key of emailTemplateKeys) {
    for (const [label, values] of cases(key)) {
      const alone = fillEmailTemplate(key, values);
      const { html, text, substitutions } = personalized(key, values);
      assert.equal(asSendGridSends(html, substitutions), alone.html, `${key}, ${label}: the HTML part`);
      assert.equal(asSendGridSends(text, substitutions), alone.text, `${key}, ${label}: the text part`);
      assert.ok(!asSendGridSends(html, substitutions).includes(TOKEN_DELIMITER), `${key}, ${label}: no token is left`);
      // The subject is each personalization's own, as rendered alone; it has no token to meet.
      assert.ok(!alone.subject.includes(TOKEN_DELIMITER));
      assert.ok(Object.keys(substitutions).length <= MAX_SUBSTITUTIONS, `${key}, ${label}: ${Object.keys(substitutions).length}`);
      assert.ok(substitutionBytes(substitutions) <= MAX_SUBSTITUTION_BYTES);
    }
  }
});

Deno.test("the HTML part's tokens and the text part's are distinct; the HTML's values are escaped, the text's are not", () => {
  const { html, text, substitutions } = personalized("reservation_cancelled", templateValues(stay()));
  const tokensIn = (body: string) => new Set(body.match(/`[a-z]\d+`/g) ?? []);
  const htmlTokens = tokensIn(html);
  const textTokens = tokensIn(text);
  assert.ok(htmlTokens.size > 0 && textTokens.size > 0);
  assert.deepEqual([...htmlTokens].filter((token) => textTokens.has(token)), [], "no token in both parts");
  assert.deepEqual(new Set(Object.keys(substitutions)), new Set([...htmlTokens, ...textTokens]), "a substitution per token");
  const valuesOf = (tokens: Set<string>) => [...tokens].map((token) => substitutions[token]);
  assert.ok(valuesOf(htmlTokens).includes("Flight\ncancelled — &lt;again&gt; &amp; again"), "the HTML's reason, escaped");
  assert.ok(valuesOf(textTokens).includes("Flight\ncancelled — <again> & again"), "the text's, as it is");
  // A value shown several times has one token in a part.
  const propertyTokens = Object.entries(substitutions).filter(([token, value]) => token.startsWith("`h") && value === "Casa Azul");
  assert.equal(propertyTokens.length, 1, JSON.stringify(propertyTokens));
  assert.ok(html.split(propertyTokens[0]![0]).length > 2, "shown more than once");
});

Deno.test("emails of one shape share their body whatever their values; another shape, another body", () => {
  for (const key of guestTemplateKeys) {
    const ana = personalized(key, templateValues(stay()));
    const ben = personalized(key, templateValues(stay({ firstName: "Ben", property: "Harbour Loft", reason: "Changed plans" })));
    assert.deepEqual([ben.html, ben.text], [ana.html, ana.text], `${key}: one body for both`);
    assert.notDeepEqual(ben.substitutions, ana.substitutions);
    const sparse = personalized(key, templateValues(sparseStay()));
    assert.notEqual(sparse.text, ana.text, `${key}: without the optional values, another body`);
  }
  const one = personalized("nightly_summary", nightlySummaryValues(night(2)));
  const other = personalized("nightly_summary", nightlySummaryValues(night(2, "Other tenant")));
  assert.deepEqual([other.html, other.text], [one.html, one.text], "two summaries of two properties each: one body");
  assert.notEqual(personalized("nightly_summary", nightlySummaryValues(night(3))).html, one.html, "three properties: another");
});

Deno.test("a list item's values have tokens of their own; a value from around the list keeps its one token", () => {
  const { html, substitutions } = personalized("nightly_summary", nightlySummaryValues(night(2)));
  const names = Object.entries(substitutions).filter(([token, value]) => token.startsWith("`h") && value.startsWith("Casa "));
  assert.deepEqual(names.map(([, value]) => value).sort(), ["Casa 0 &quot;Azul&quot;", "Casa 1 &quot;Azul&quot;"]);
  assert.notEqual(names[0]![0], names[1]![0]);
  const tenant = Object.entries(substitutions).filter(([, value]) => value === "Acme &amp; Co &lt;Stays&gt;");
  assert.equal(tenant.length, 1, "the tenant's name, shown in and out of the list, is one substitution");
  assert.ok(html.includes(tenant[0]![0]));
});

Deno.test("an email whose values would meet a token, or pass SendGrid's limits, is not personalized: it goes alone", () => {
  const backtick = personalizeEmail("checkin_reminder", templateValues(stay({ firstName: "An`a" })));
  assert.ok("unfit" in backtick && /guest\.firstName has a `/.test(backtick.unfit), JSON.stringify(backtick));

  const long = personalizeEmail("reservation_cancelled", templateValues(stay({ reason: "é".repeat(3000) })));
  assert.ok("unfit" in long && /bytes of substitutions, more than SendGrid's 10000/.test(long.unfit), JSON.stringify(long));

  const many = personalizeEmail("nightly_summary", nightlySummaryValues(night(12)));
  assert.ok("unfit" in many && /substitutions, more than SendGrid's 100/.test(many.unfit), JSON.stringify(many));
});

Deno.test("the bytes SendGrid counts are every key's and value's, in UTF-8", () => {
  assert.equal(substitutionBytes({ "`h0`": "é", "`t0`": "ab" }), 4 + 2 + 4 + 2);
});

Deno.test("no compiled template has the token delimiter in its own text", () => {
  for (const key of emailTemplateKeys) {
    const { subject, html, text } = compiledTemplates[key];
    for (const part of [subject, html, text]) assert.ok(!part.includes(TOKEN_DELIMITER), key);
  }
});
