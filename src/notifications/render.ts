// Renders an email from the compiled templates: pure, no I/O. The MJML was
// compiled to HTML at build time (scripts/build-templates.ts); here only the
// placeholders are filled. A guest's values are formatted for the guest (their
// locale) and the property (its time zone and local times); every value is
// HTML-escaped in the HTML part, left as it is in the text part, and made
// single-line in the subject. A template that refers to anything the data does
// not provide throws.

import { compiledTemplates } from "./templates/compiled.ts";
import {
  type EmailTemplateKey,
  emailTemplateKeys,
  type GuestTemplateKey,
  guestTemplateKeys,
  isEmailTemplateKey,
  isGuestTemplateKey,
  isTemplateKey,
  type TemplateKey,
  templateKeys,
} from "./templates/sources.ts";
import { fillParsed, type ParsedTemplate, parseTemplate, TemplateError, type TemplateValues } from "./templates/syntax.ts";
import {
  countFormatter,
  formatClockTime,
  formatDate,
  formatInstant,
  formatShortDate,
  formatShortInstant,
  moneyFormatter,
  nightsBetween,
  usableLocale,
} from "./format.ts";

export {
  type EmailTemplateKey,
  emailTemplateKeys,
  type GuestTemplateKey,
  guestTemplateKeys,
  isEmailTemplateKey,
  isGuestTemplateKey,
  isTemplateKey,
  TemplateError,
  type TemplateKey,
  templateKeys,
  type TemplateValues,
};

export interface TemplateData {
  /** The guest's BCP 47 locale (guests.locale), for numbers, money and dates. */
  locale: string;
  guest: { firstName: string; lastName: string };
  property: {
    name: string;
    /** IANA time zone: access code times are shown in it. */
    timezone: string;
    addressLine1: string | null;
    city: string | null;
    phone: string | null;
    email: string | null;
    /** "HH:MM:SS" (or "HH:MM"), local to the property. */
    checkInTime: string;
    checkOutTime: string;
  };
  unit: { name: string } | null;
  reservation: {
    confirmationCode: string;
    /** "YYYY-MM-DD", the property's calendar dates. */
    checkIn: string;
    checkOut: string;
    adults: number;
    children: number;
    /** Amounts in the currency's minor units. */
    totalAmount: number;
    amountPaid: number;
    balance: number;
    /** ISO 4217. */
    currency: string;
    cancellationReason: string | null;
  };
  /** Required by access_code_delivery. validFrom and validUntil are RFC 3339 instants. */
  accessCode?: { code: string; validFrom: string; validUntil: string };
}

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

// The compiled templates are constants, so each part is parsed once rather than per email.
const parsedTemplates = Object.fromEntries(emailTemplateKeys.map((key) => {
  const { subject, html, text } = compiledTemplates[key];
  return [key, { subject: parseTemplate(subject), html: parseTemplate(html), text: parseTemplate(text) }];
})) as Readonly<Record<EmailTemplateKey, Readonly<Record<keyof RenderedEmail, ParsedTemplate>>>>;

/** The parsed parts of an email template, for filling them otherwise than fillEmailTemplate does (personalize.ts). */
export function parsedEmailTemplate(key: EmailTemplateKey): Readonly<Record<keyof RenderedEmail, ParsedTemplate>> {
  if (!isEmailTemplateKey(key)) throw new TemplateError(`unknown template key ${JSON.stringify(key)}`);
  return parsedTemplates[key];
}

/** A guest's email for one of the guest templates. Throws TemplateError. */
export function renderTemplate(key: GuestTemplateKey, data: TemplateData): RenderedEmail {
  if (!isGuestTemplateKey(key)) {
    throw new TemplateError(
      isEmailTemplateKey(key) ? `${key} is not a guest's email: it is not rendered from a stay` : `unknown template key ${JSON.stringify(key)}`,
    );
  }
  return fillEmailTemplate(key, templateValues(data));
}

/**
 * Any email template filled with values made for it: each part with its own
 * encoding, the subject on one line. Throws TemplateError.
 */
export function fillEmailTemplate(key: EmailTemplateKey, values: TemplateValues): RenderedEmail {
  if (!isEmailTemplateKey(key)) throw new TemplateError(`unknown template key ${JSON.stringify(key)}`);
  const template = parsedTemplates[key];
  return {
    subject: fillParsed(template.subject, values, singleLine).replace(/\s+/g, " ").trim(),
    html: fillParsed(template.html, values, escapeHtml),
    text: fillParsed(template.text, values, plainText),
  };
}

/**
 * The values the templates can refer to, formatted, for the emails and the SMS
 * texts alike. A null value is one the data does not have (no unit, no phone, no
 * reason): templates show it only inside its {{#name}} block. The accessCode.*
 * names exist only when the data has an access code. The *Short values say the
 * same in fewer characters, for SMS.
 */
export function templateValues(data: TemplateData): TemplateValues {
  const locale = usableLocale(data.locale);
  const { guest, property, unit, reservation, accessCode } = data;
  const money = moneyFormatter(locale, reservation.currency);
  const nights = nightsBetween(reservation.checkIn, reservation.checkOut);
  const count = countFormatter(locale);
  const address = [property.addressLine1, property.city].filter((part): part is string => !!part?.trim()).join(", ");
  const values: Record<string, string | null> = {
    "guest.firstName": guest.firstName,
    "guest.lastName": guest.lastName,
    "guest.fullName": `${guest.firstName} ${guest.lastName}`.trim(),
    "property.name": property.name,
    "property.timezone": property.timezone,
    "property.address": address || null,
    "property.phone": property.phone || null,
    "property.email": property.email || null,
    "property.checkInTime": formatClockTime(locale, property.checkInTime),
    "property.checkOutTime": formatClockTime(locale, property.checkOutTime),
    "unit.name": unit?.name || null,
    "reservation.confirmationCode": reservation.confirmationCode,
    "reservation.checkIn": formatDate(locale, reservation.checkIn),
    "reservation.checkOut": formatDate(locale, reservation.checkOut),
    "reservation.checkInShort": formatShortDate(locale, reservation.checkIn),
    "reservation.checkOutShort": formatShortDate(locale, reservation.checkOut),
    "reservation.nights": count(nights, "night", "nights"),
    "reservation.guests": [
      count(reservation.adults, "adult", "adults"),
      ...(reservation.children > 0 ? [count(reservation.children, "child", "children")] : []),
    ].join(", "),
    "reservation.total": money(reservation.totalAmount),
    "reservation.paid": money(reservation.amountPaid),
    "reservation.balance": money(reservation.balance),
    "reservation.balanceDue": reservation.balance > 0 ? money(reservation.balance) : null,
    "reservation.cancellationReason": reservation.cancellationReason?.trim() || null,
  };
  if (accessCode) {
    values["accessCode.code"] = accessCode.code;
    values["accessCode.validFrom"] = formatInstant(locale, property.timezone, accessCode.validFrom);
    values["accessCode.validUntil"] = formatInstant(locale, property.timezone, accessCode.validUntil);
    values["accessCode.validFromShort"] = formatShortInstant(locale, property.timezone, accessCode.validFrom);
    values["accessCode.validUntilShort"] = formatShortInstant(locale, property.timezone, accessCode.validUntil);
  }
  return values;
}

// The text part shows a value as it is.
export function plainText(value: string): string {
  return value;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => htmlEntities[char] ?? char);
}

const htmlEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

// A subject is one header line: no line breaks or other control characters.
function singleLine(value: string): string {
  // deno-lint-ignore no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]+/g, " ");
}
