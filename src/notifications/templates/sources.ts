// The notification templates' keys and where each one's sources live. Beside
// this file, per email key: <key>.mjml (the HTML part, compiled to HTML by
// scripts/build-templates.ts), <key>.txt (the plain-text part) and
// <key>.subject.txt (the subject, one line); per SMS key, <key>.sms.txt (the
// text message, written for SMS, never the email's text part cut short).
// compiled.ts records, per email key, a SHA-256 of these sources and of the MJML
// version that compiled them, so a test can tell when the compiled output is
// older than its sources; an SMS text is carried as it is, so the test compares
// it with its file.

/** The templates about a guest's stay, filled from TemplateData (render.ts), by email and by SMS. */
export const guestTemplateKeys = [
  "checkin_reminder",
  "checkout_summary",
  "reservation_cancelled",
  "access_code_delivery",
] as const;

export type GuestTemplateKey = typeof guestTemplateKeys[number];

export function isGuestTemplateKey(value: string): value is GuestTemplateKey {
  return (guestTemplateKeys as readonly string[]).includes(value);
}

/**
 * Every template with an email (MJML, text and subject): the guest's, and the
 * nightly summary to a tenant's owners and admins, filled from NightlySummaryData
 * (summary.ts).
 */
export const emailTemplateKeys = [...guestTemplateKeys, "nightly_summary"] as const;

export type EmailTemplateKey = typeof emailTemplateKeys[number];

export function isEmailTemplateKey(value: string): value is EmailTemplateKey {
  return (emailTemplateKeys as readonly string[]).includes(value);
}

/** The templates with an SMS text: the guest's, as only guests get SMS. */
export const smsTemplateKeys = guestTemplateKeys;

export type SmsTemplateKey = GuestTemplateKey;

// The names from before there were other templates than the guest's, under which
// the API's schema and the worker still know the keys a notification may hold
// today. They stay the guest keys until the notifications table accepts others:
// widening them widens what the API promises.
export const templateKeys = guestTemplateKeys;
export type TemplateKey = GuestTemplateKey;
export const isTemplateKey = isGuestTemplateKey;

export interface TemplateSources {
  subject: string;
  text: string;
  mjml: string;
}

/** The source files of one email, relative to this folder. */
export function sourceFileNames(key: EmailTemplateKey): Record<keyof TemplateSources, string> {
  return { subject: `${key}.subject.txt`, text: `${key}.txt`, mjml: `${key}.mjml` };
}

/** The source file of one SMS text, relative to this folder. */
export function smsSourceFileName(key: SmsTemplateKey): string {
  return `${key}.sms.txt`;
}

/**
 * SHA-256 (hex) over the MJML version and the three sources, each part
 * length-prefixed so that no two different inputs share an encoding.
 */
export async function hashSources(sources: TemplateSources, mjmlVersion: string): Promise<string> {
  const parts: [string, string][] = [
    ["mjml-version", mjmlVersion],
    ["subject", sources.subject],
    ["text", sources.text],
    ["mjml", sources.mjml],
  ];
  const encoded = parts.map(([name, value]) => `${name} ${value.length}\n${value}\n`).join("");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(encoded));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
