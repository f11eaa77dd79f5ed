// SMS texts: the segment count by GSM 03.38 (what a text costs and which
// characters make it UCS-2), and each guest template's short text, which fits one
// GSM-7 segment for typical data. Pure: no stack needed.
import assert from "node:assert/strict";
import { type TemplateData, templateValues } from "../../src/notifications/render.ts";
import { renderSms, smsSegments } from "../../src/notifications/sms-text.ts";
import { smsTemplates } from "../../src/notifications/templates/compiled.ts";
import { type SmsTemplateKey, smsTemplateKeys } from "../../src/notifications/templates/sources.ts";
import { placeholderNames } from "../../src/notifications/templates/syntax.ts";

// The default alphabet as a phone shows it, row by row of the code table, without the escape.
const gsmDefaultAlphabet = "@£$¥èéùìòÇ\nØø\rÅå" + "Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ" + " !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§" + "¿abcdefghijklmnopqrstuvwxyzäöñüà";
const gsmExtension = "\f^{}\\[~]|€";

Deno.test("smsSegments: the GSM-7 default alphabet costs one septet a character, the extension table two", () => {
  assert.equal([...gsmDefaultAlphabet].length, 127);
  assert.deepEqual(smsSegments(gsmDefaultAlphabet), { encoding: "GSM-7", units: 127, segments: 1, perSegment: 160 });
  assert.deepEqual(smsSegments(gsmExtension), { encoding: "GSM-7", units: 20, segments: 1, perSegment: 160 });
  for (const char of gsmDefaultAlphabet) assert.equal(smsSegments(char).units, 1, `${JSON.stringify(char)} is one septet`);
  for (const char of gsmExtension) assert.equal(smsSegments(char).units, 2, `${JSON.stringify(char)} is two septets`);
  // A line break is CR LF: two septets.
  assert.equal(smsSegments("a\r\nb").units, 4);
});

Deno.test("smsSegments: one character outside GSM-7 makes the whole text UCS-2", () => {
  for (
    const [char, why] of [
      ["\u00e1", "á: of the accents GSM-7 has only some"],
      ["\u00e7", "ç: the table has the capital Ç only"],
      ["\u2019", "a typographic apostrophe"],
      ["\u2013", "an en dash"],
      ["\u2126", "the ohm sign, not the Greek capital omega"],
      ["\u0410", "the Cyrillic capital A, not the Latin one"],
      ["\u00a0", "a no-break space"],
      ["\t", "a tab"],
      ["\u001b", "the escape itself"],
      ["\u{1f600}", "an emoji"],
    ] as const
  ) {
    const counted = smsSegments(`Hello ${char}`);
    assert.equal(counted.encoding, "UCS-2", why);
    assert.equal(counted.units, 6 + char.length, why);
  }
  // Greek capitals that GSM-7 has, as its table spells them.
  assert.equal(smsSegments("ΔΦΓΛΩΠΨΣΘΞ").encoding, "GSM-7");
});

Deno.test("smsSegments: 160 septets in one message, 153 a segment once concatenated", () => {
  const a = (n: number) => "a".repeat(n);
  assert.deepEqual(smsSegments(a(160)), { encoding: "GSM-7", units: 160, segments: 1, perSegment: 160 });
  assert.deepEqual(smsSegments(a(161)), { encoding: "GSM-7", units: 161, segments: 2, perSegment: 153 });
  assert.deepEqual(smsSegments(a(306)), { encoding: "GSM-7", units: 306, segments: 2, perSegment: 153 });
  assert.deepEqual(smsSegments(a(307)), { encoding: "GSM-7", units: 307, segments: 3, perSegment: 153 });
  assert.equal(smsSegments(a(153 * 7)).segments, 7);
  // 80 euro signs are 160 septets, one message; 81 are 162, and 76 of them fill a segment (152 septets).
  assert.deepEqual(smsSegments("€".repeat(80)), { encoding: "GSM-7", units: 160, segments: 1, perSegment: 160 });
  assert.deepEqual(smsSegments("€".repeat(81)), { encoding: "GSM-7", units: 162, segments: 2, perSegment: 153 });
  assert.equal(smsSegments("€".repeat(153)).segments, 3); // 76 + 76 + 1, not ceil(306 / 153) = 2
});

Deno.test("smsSegments: an escape pair is never split across segments", () => {
  // 306 septets would fill two segments exactly, but the euro sign would straddle the
  // first boundary: it moves to the second segment whole, and the last "a" needs a third.
  const straddling = "a".repeat(152) + "€" + "a".repeat(152);
  assert.deepEqual(smsSegments(straddling), { encoding: "GSM-7", units: 306, segments: 3, perSegment: 153 });
  // The same septets with the euro sign clear of the boundary fit in two.
  const clear = "a".repeat(151) + "€" + "a".repeat(153);
  assert.deepEqual(smsSegments(clear), { encoding: "GSM-7", units: 306, segments: 2, perSegment: 153 });
});

Deno.test("smsSegments: UCS-2 holds 70 code units alone, 67 a segment, and never splits a surrogate pair", () => {
  const zhe = (n: number) => "Ж".repeat(n);
  assert.deepEqual(smsSegments(zhe(70)), { encoding: "UCS-2", units: 70, segments: 1, perSegment: 70 });
  assert.deepEqual(smsSegments(zhe(71)), { encoding: "UCS-2", units: 71, segments: 2, perSegment: 67 });
  assert.deepEqual(smsSegments(zhe(134)), { encoding: "UCS-2", units: 134, segments: 2, perSegment: 67 });
  assert.deepEqual(smsSegments(zhe(135)), { encoding: "UCS-2", units: 135, segments: 3, perSegment: 67 });
  // An emoji is two code units: 35 of them fill one message.
  assert.deepEqual(smsSegments("\u{1f600}".repeat(35)), { encoding: "UCS-2", units: 70, segments: 1, perSegment: 70 });
  // 134 units would fill two segments exactly, but the emoji's pair would straddle the boundary.
  assert.deepEqual(smsSegments(zhe(66) + "\u{1f600}" + zhe(66)), { encoding: "UCS-2", units: 134, segments: 3, perSegment: 67 });
  assert.deepEqual(smsSegments(zhe(65) + "\u{1f600}" + zhe(67)), { encoding: "UCS-2", units: 134, segments: 2, perSegment: 67 });
  // GSM-7's own characters cost one unit each once the text is UCS-2, the euro sign too.
  assert.deepEqual(smsSegments("€ Ж"), { encoding: "UCS-2", units: 3, segments: 1, perSegment: 70 });
});

Deno.test("smsSegments: an empty text is one segment of nothing, as sending it would be", () => {
  assert.deepEqual(smsSegments(""), { encoding: "GSM-7", units: 0, segments: 1, perSegment: 160 });
});

// Typical data: a property name of 20 characters, a unit, a phone, a balance due, English.
function typicalStay(locale = "en"): TemplateData {
  return {
    locale,
    guest: { firstName: "Margaret", lastName: "Hamilton" },
    property: {
      name: "Seaside Apartments L",
      timezone: "Europe/Lisbon",
      addressLine1: "Rua do Sol 12",
      city: "Lisboa",
      phone: "+351912345678",
      email: "stay@seaside.example",
      checkInTime: "15:00:00",
      checkOutTime: "11:00:00",
    },
    unit: { name: "Apartment 12B" },
    reservation: {
      confirmationCode: "SA-7Q2X9K",
      checkIn: "2027-03-26",
      checkOut: "2027-03-29",
      adults: 2,
      children: 1,
      totalAmount: 123450,
      amountPaid: 30000,
      balance: 93450,
      currency: "EUR",
      cancellationReason: "Flight cancelled by the airline",
    },
    accessCode: { code: "48291374", validFrom: "2027-03-26T15:00:00Z", validUntil: "2027-03-29T11:00:00Z" },
  };
}

// The same stay with none of the optional values: no unit, no contact, fully paid.
function sparseStay(locale = "en"): TemplateData {
  const data = typicalStay(locale);
  data.unit = null;
  data.property = { ...data.property, addressLine1: null, city: null, phone: null, email: null };
  data.reservation = { ...data.reservation, amountPaid: 123450, balance: 0, cancellationReason: null };
  return data;
}

Deno.test("renderSms: every placeholder of every SMS text resolves, with and without the optional values", () => {
  for (const key of smsTemplateKeys) {
    for (const data of [typicalStay(), sparseStay()]) {
      const provided = new Set(Object.keys(templateValues(data)));
      const unknown = placeholderNames(smsTemplates[key]).filter((name) => !provided.has(name));
      assert.deepEqual(unknown, [], `${key} refers to names the renderer does not provide`);
      const { text } = renderSms(key, data);
      assert.doesNotMatch(text, /\{\{|\}\}|undefined|null|NaN/, `${key} kept a placeholder or shows a missing value`);
    }
  }
});

Deno.test("renderSms: each guest text says the property, its one fact and the confirmation code", () => {
  const texts = Object.fromEntries(smsTemplateKeys.map((key) => [key, renderSms(key, typicalStay())])) as Record<
    SmsTemplateKey,
    ReturnType<typeof renderSms>
  >;
  assert.deepEqual(texts.checkin_reminder, {
    text: "Seaside Apartments L: welcome, Margaret! You are checked in to Apartment 12B.\n" +
      "Check-out: Mon, Mar 29 by 11:00 AM.\n" +
      "Confirmation code: SA-7Q2X9K",
    encoding: "GSM-7",
    segments: 1,
  });
  assert.deepEqual(texts.checkout_summary, {
    text: "Seaside Apartments L: thank you for staying with us, Margaret!\n" +
      "3 nights, total €1,234.50, €934.50 still due.\n" +
      "Confirmation code: SA-7Q2X9K",
    encoding: "GSM-7",
    segments: 1,
  });
  assert.deepEqual(texts.reservation_cancelled, {
    text: "Seaside Apartments L: your reservation SA-7Q2X9K for Fri, Mar 26 to Mon, Mar 29 is cancelled.\n" +
      "Questions? Call +351912345678.",
    encoding: "GSM-7",
    segments: 1,
  });
  // Lisbon moves to summer time on 28 March 2027: the code ends at 11:00 UTC, 12:00 on the property's clock.
  assert.deepEqual(texts.access_code_delivery, {
    text: "Seaside Apartments L, Apartment 12B: your door code is 48291374\n" +
      "Valid Mar 26, 3:00 PM to Mar 29, 12:00 PM (local time).\n" +
      "Confirmation code: SA-7Q2X9K",
    encoding: "GSM-7",
    segments: 1,
  });

  // Without the optional values: no unit, no phone line, "paid in full" for a settled bill.
  assert.equal(
    renderSms("checkin_reminder", sparseStay()).text,
    "Seaside Apartments L: welcome, Margaret! You are checked in.\nCheck-out: Mon, Mar 29 by 11:00 AM.\nConfirmation code: SA-7Q2X9K",
  );
  assert.equal(
    renderSms("checkout_summary", sparseStay()).text,
    "Seaside Apartments L: thank you for staying with us, Margaret!\n3 nights, total €1,234.50, paid in full.\n" +
      "Confirmation code: SA-7Q2X9K",
  );
  assert.equal(
    renderSms("reservation_cancelled", sparseStay()).text,
    "Seaside Apartments L: your reservation SA-7Q2X9K for Fri, Mar 26 to Mon, Mar 29 is cancelled.",
  );
  assert.ok(renderSms("access_code_delivery", sparseStay()).text.startsWith("Seaside Apartments L: your door code is 48291374\n"));
  // The door code's window is on the property's clock, in the guest's style.
  const tokyo = typicalStay("en-GB");
  tokyo.property = { ...tokyo.property, timezone: "Asia/Tokyo" };
  assert.ok(renderSms("access_code_delivery", tokyo).text.includes("\nValid 27 Mar, 0:00 to 29 Mar, 20:00 (local time).\n"));
});

Deno.test("renderSms: typical data fits one GSM-7 segment, in every English style and with or without the optional values", () => {
  for (const locale of ["en", "en-US", "en-GB", "en-IE", "en-AU"]) {
    for (const data of [typicalStay(locale), sparseStay(locale)]) {
      for (const key of smsTemplateKeys) {
        const sms = renderSms(key, data);
        assert.equal(sms.encoding, "GSM-7", `${key} in ${locale} is not GSM-7: ${JSON.stringify(sms.text)}`);
        assert.equal(sms.segments, 1, `${key} in ${locale} takes ${sms.segments} segments: ${JSON.stringify(sms.text)}`);
        assert.ok(smsSegments(sms.text).units <= 150, `${key} in ${locale} leaves under 10 septets to spare`);
      }
    }
  }
});

Deno.test("renderSms: a name outside GSM-7 makes the text UCS-2, and the count follows", () => {
  const emoji = typicalStay();
  emoji.guest = { firstName: "Margaret \u{1f31e}", lastName: "Hamilton" };
  const sunny = renderSms("checkin_reminder", emoji);
  assert.ok(sunny.text.includes("welcome, Margaret \u{1f31e}!"));
  assert.equal(sunny.encoding, "UCS-2");
  // 145 code units: more than 70, so segments of 67, and the third holds the rest.
  assert.equal(sunny.text.length, 145);
  assert.equal(sunny.segments, 3);

  const cyrillic = typicalStay();
  cyrillic.guest = { firstName: "Анастасия", lastName: "Петрова" };
  const welcome = renderSms("checkin_reminder", cyrillic);
  assert.equal(welcome.encoding, "UCS-2");
  assert.deepEqual({ encoding: welcome.encoding, segments: welcome.segments }, {
    encoding: smsSegments(welcome.text).encoding,
    segments: Math.ceil(welcome.text.length / 67),
  });
  assert.ok(welcome.segments >= 2);
  // The door code's text has no guest name: it stays GSM-7 whatever the guest is called.
  assert.equal(renderSms("access_code_delivery", cyrillic).encoding, "GSM-7");

  // A long property name in GSM-7 takes segments of 153 septets.
  const long = typicalStay();
  long.property = { ...long.property, name: "The Grand Seaside Apartments and Residences of the Old Town, Lisbon" };
  const cancelled = renderSms("reservation_cancelled", long);
  assert.equal(cancelled.encoding, "GSM-7");
  assert.ok(smsSegments(cancelled.text).units > 160);
  assert.equal(cancelled.segments, 2);
});

Deno.test("renderSms: whitespace is made plain, values are not escaped, and a missing value fails loudly", () => {
  const data = typicalStay("de-DE");
  data.property = { ...data.property, name: "Bed & Breakfast <Sol>\t\r\n  Lisboa" };
  const summary = renderSms("checkout_summary", data);
  // The no-break spaces of German money are plain spaces: the text stays GSM-7.
  assert.equal(
    summary.text,
    "Bed & Breakfast <Sol>\nLisboa: thank you for staying with us, Margaret!\n3 nights, total 1.234,50 €, 934,50 € still due.\n" +
      "Confirmation code: SA-7Q2X9K",
  );
  assert.equal(summary.encoding, "GSM-7");
  for (const key of smsTemplateKeys) {
    const { text } = renderSms(key, data);
    assert.doesNotMatch(text, /[^\S\n]{2}|\n\n| \n|\n | $|^ /, `${key} has whitespace left over: ${JSON.stringify(text)}`);
    assert.doesNotMatch(text, /&amp;|&lt;/, `${key} is HTML-escaped`);
  }

  const withoutCode = typicalStay();
  delete withoutCode.accessCode;
  assert.throws(() => renderSms("access_code_delivery", withoutCode), /\{\{accessCode\.[A-Za-z]+\}\}, which the data does not provide/);
  assert.throws(() => renderSms("nightly_summary" as SmsTemplateKey, typicalStay()), /no SMS template "nightly_summary"/);
});
