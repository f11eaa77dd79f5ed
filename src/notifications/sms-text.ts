// The SMS side of the guest notifications: how many segments a text costs, and
// the short texts themselves. Pure, no I/O.
//
// A guest's SMS is its own template (templates/<key>.sms.txt, carried in
// compiled.ts), filled with the same values as the email (templateValues), of
// which it uses the *Short forms where there are any. It says the property, the
// one fact the message is for and the confirmation code, and leaves the rest to
// the email: a typical text (a property name of about 20 characters, English)
// fits one GSM-7 segment, which test/notifications/sms-text.unit.test.ts holds it
// to. That is also why the cancellation text has no reason: a guest's free-text
// reason would often cost a second segment.
//
// Segments follow GSM 03.38 (3GPP TS 23.038) and the concatenation header of
// TS 23.040: a text made only of the GSM 7-bit default alphabet, plus the
// characters of its basic extension table, travels as GSM-7 septets; any other
// character makes the whole text UCS-2 (UTF-16 code units on the wire). One
// message holds 160 septets or 70 code units; a longer text is split into
// segments that each give up room to a 6-byte concatenation header, leaving 153
// septets or 67 code units. A segment never ends between the escape and its
// extension character, nor between the halves of a surrogate pair: the phone
// could not put them back together, so such a character moves to the next
// segment whole. National language shift tables (Turkish, Portuguese, Indian
// scripts...) are not counted: a provider that uses them does so to send a text
// that would otherwise be UCS-2 in fewer segments, so the count here is the most
// the text costs.

import { type TemplateData, templateValues } from "./render.ts";
import { smsTemplates } from "./templates/compiled.ts";
import { isGuestTemplateKey, type SmsTemplateKey, smsTemplateKeys } from "./templates/sources.ts";
import { fillParsed, type ParsedTemplate, parseTemplate, TemplateError } from "./templates/syntax.ts";

export type SmsEncoding = "GSM-7" | "UCS-2";

export interface SmsSegments {
  encoding: SmsEncoding;
  /** Septets for GSM-7 (an extension character counts 2), UTF-16 code units for UCS-2. */
  units: number;
  segments: number;
  /** The room of each segment in units: 160 or 70 alone, 153 or 67 when concatenated. */
  perSegment: number;
}

// The GSM 7-bit default alphabet, in the order of its code table (0x00 to 0x7F).
// The escape (0x1B) is left out: it is how the extension table is reached, not a
// character a text can hold. Written as \u escapes where a letter has look-alikes
// (the Greek capitals, which are not their Latin twins).
const gsmBasic = new Set(
  "@\u00a3$\u00a5\u00e8\u00e9\u00f9\u00ec\u00f2\u00c7\n\u00d8\u00f8\r\u00c5\u00e5" +
    "\u0394_\u03a6\u0393\u039b\u03a9\u03a0\u03a8\u03a3\u0398\u039e\u00c6\u00e6\u00df\u00c9" +
    " !\"#\u00a4%&'()*+,-./0123456789:;<=>?" +
    "\u00a1ABCDEFGHIJKLMNOPQRSTUVWXYZ\u00c4\u00d6\u00d1\u00dc\u00a7" +
    "\u00bfabcdefghijklmnopqrstuvwxyz\u00e4\u00f6\u00f1\u00fc\u00e0",
);

// The basic extension table: each is sent as the escape and one more septet.
const gsmExtension = new Set("\f^{}\\[~]|\u20ac");

const GSM_SINGLE = 160;
const GSM_CONCATENATED = 153;
const UCS2_SINGLE = 70;
const UCS2_CONCATENATED = 67;

/** The septets a character costs in GSM-7, or null when GSM-7 cannot carry it. */
function septets(char: string): 1 | 2 | null {
  if (gsmBasic.has(char)) return 1;
  if (gsmExtension.has(char)) return 2;
  return null;
}

/**
 * How a text travels as SMS: its encoding, its length in that encoding's units and
 * the segments it takes. An empty text counts as one segment of 0 units: that is
 * what sending it costs (a message with an empty body is still a message); a
 * caller that must not send empty texts checks the text, not this count.
 */
export function smsSegments(text: string): SmsSegments {
  // Characters, not UTF-16 code units: an astral character is one character of two units.
  const chars = Array.from(text);
  const costs = chars.map(septets);
  if (costs.every((cost): cost is 1 | 2 => cost !== null)) {
    return split("GSM-7", costs, GSM_SINGLE, GSM_CONCATENATED);
  }
  return split("UCS-2", chars.map((char) => char.length), UCS2_SINGLE, UCS2_CONCATENATED);
}

// Packs the characters' costs into segments, in order, never splitting a character.
function split(encoding: SmsEncoding, costs: readonly number[], single: number, concatenated: number): SmsSegments {
  const units = costs.reduce((sum, cost) => sum + cost, 0);
  if (units <= single) return { encoding, units, segments: 1, perSegment: single };
  let segments = 1;
  let used = 0;
  for (const cost of costs) {
    if (used + cost > concatenated) {
      segments += 1;
      used = 0;
    }
    used += cost;
  }
  return { encoding, units, segments, perSegment: concatenated };
}

export interface RenderedSms {
  text: string;
  encoding: SmsEncoding;
  segments: number;
}

// The texts are constants, so each is parsed once rather than per message.
const parsedSmsTemplates = Object.fromEntries(
  smsTemplateKeys.map((key) => [key, parseTemplate(smsTemplates[key])]),
) as Readonly<Record<SmsTemplateKey, ParsedTemplate>>;

/**
 * A guest's SMS for a template: filled, with its whitespace made plain (below), and
 * what it costs. Values are not escaped: an SMS is plain text. Throws TemplateError.
 */
export function renderSms(key: SmsTemplateKey, data: TemplateData): RenderedSms {
  if (!isGuestTemplateKey(key)) throw new TemplateError(`no SMS template ${JSON.stringify(key)}`);
  const text = plainWhitespace(fillParsed(parsedSmsTemplates[key], templateValues(data), (value) => value));
  const { encoding, segments } = smsSegments(text);
  return { text, encoding, segments };
}

// Every whitespace or control character but the line feed becomes one plain space,
// and every line break one line feed, with no blank line and no space at either
// end of a line. Besides tidiness this keeps the text GSM-7: a tab, a carriage
// return from a value, a no-break space (which some locales put in money, like
// "12,50 €") or a narrow one (which some put before "PM") would otherwise make the
// whole text UCS-2 or cost a septet for nothing.
function plainWhitespace(text: string): string {
  return text
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, " ")
    .replace(/[^\S\n]+/g, " ")
    .replace(/ ?\n[\n ]*/g, "\n")
    .trim();
}
