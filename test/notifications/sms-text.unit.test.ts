// SMS texts: the segment count by GSM 03.38 (what a text costs and which
// characters make it UCS-2), and each guest template's short text, which fits one
// GSM-7 segment for typical data. Pure: no stack needed.
import assert from "node:assert/strict";
import { smsSegments } from "../../src/notifications/sms-text.ts";

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
